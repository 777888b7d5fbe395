// A fake OpenAI-compatible chat-completions endpoint for the browser tests. It speaks the real
// streaming format: it asks through a request_user_input tool call (arguments streamed in
// pieces) when the conversation ends with the person's message, and answers in text once the
// tool result comes back. Given a reply, it writes that instead, one small piece every pace ms
// (the last request's abort is told by aborted), and the rest of it at once when asked again.
// Given context, a function of the person's message, its question carries what it returns.
import { createServer } from 'node:http'

// startStream begins a streamed chat completion on res and returns send(delta, finish),
// which writes one chunk of it.
export function startStream (res, model) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' })
  return (delta, finish = null) => res.write(`data: ${JSON.stringify({
    id: 'chatcmpl-1', object: 'chat.completion.chunk', model,
    choices: [{ index: 0, delta, finish_reason: finish }]
  })}\n\n`)
}

// startModel serves a chat-completions endpoint whose every turn is written by
// turn(body, send) (send as startStream gives it), and keeps the requests it was sent.
export function startModel (turn) {
  const requests = []
  const server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = JSON.parse(raw)
    requests.push(body)
    await turn(body, startStream(res, body.model))
    res.end('data: [DONE]\n\n')
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(r))
  })))
}

export function startFakeOpenAI ({ reply, pace = 40, context } = {}) {
  const requests = []
  let aborted = () => {}
  const abortedOnce = new Promise((resolve) => { aborted = resolve })
  const server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'Content-Type': 'application/json' })
      return res.end('{"error":{"message":"not found","type":"invalid_request_error"}}')
    }
    const body = JSON.parse(raw)
    requests.push(body)
    const send = startStream(res, body.model)
    const last = body.messages[body.messages.length - 1]
    if (reply && last.role === 'user') {
      let gone = false
      res.on('close', () => { if (!res.writableEnded) { gone = true; aborted() } })
      const first = requests.filter((r) => r.messages.at(-1).role === 'user').length === 1
      const pieces = reply.match(/[^ \n]*[ \n]*/g).filter(Boolean)
      send({ role: 'assistant', content: '' })
      for (const p of pieces) {
        if (gone) return
        send({ content: p })
        if (first) await new Promise((r) => setTimeout(r, pace))
      }
      send({}, 'stop')
    } else if (last.role === 'tool') {
      const result = JSON.parse(last.content)
      const words = `Thanks! I will plan the launch for **${result.values?.audience}** with ${result.values?.attendees} attendees.`.split(/(?<= )/)
      for (const w of words) { send({ content: w }); await new Promise((r) => setTimeout(r, 10)) }
      send({}, 'stop')
    } else {
      const args = JSON.stringify({
        prompt: 'Who is the launch for, and how many people will come?',
        context: context?.(last.content),
        request_type: 'clarification',
        fields: [
          { name: 'audience', label: 'Audience', kind: 'select', required: true, options: [{ value: 'customers', label: 'Customers' }, { value: 'partners', label: 'Partners' }] },
          { name: 'attendees', label: 'Attendees', kind: 'integer', required: true, min: 1, max: 500 }
        ]
      })
      send({ role: 'assistant', content: 'Let me ask first. ' })
      const cut = Math.floor(args.length / 2)
      send({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'request_user_input', arguments: args.slice(0, cut) } }] })
      send({ tool_calls: [{ index: 0, function: { arguments: args.slice(cut) } }] })
      send({}, 'tool_calls')
    }
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`)
    res.end('data: [DONE]\n\n')
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    aborted: abortedOnce,
    close: () => new Promise((r) => server.close(r))
  })))
}
