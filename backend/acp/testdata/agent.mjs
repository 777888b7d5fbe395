// A test ACP agent (Agent Client Protocol v1) built on the official SDK,
// @agentclientprotocol/sdk 2.4.0, speaking newline-delimited JSON-RPC on stdin/stdout.
// The Go tests of backend/acp start it as `node agent.mjs`; a prompt's words choose what it
// does (see scenarioOf). Only protocol goes to stdout; diagnostics go to stderr.
//
// Environment:
//   ACP_TEST_LOG       a file to append one JSON line per event to: {"pid", "event", ...}
//   ACP_TEST_SESSIONS  a directory: advertise loadSession and keep <dir>/<sessionId>.json
//   ACP_TEST_SLOW_MS   a delay between streamed chunks (default 0)
//   ACP_TEST_PLAIN_PROMPT  when set, advertise no embedded context and no images
//   ACP_TEST_GRANDCHILD    when set, start a process of its own that it never ends
//   ACP_TEST_HANG_NEW      when set, never answer session/new (an agent stuck on its network)
import * as acp from '@agentclientprotocol/sdk'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Readable, Writable } from 'node:stream'

const logFile = process.env.ACP_TEST_LOG || ''
const sessionsDir = process.env.ACP_TEST_SESSIONS || ''
const slowMs = Math.max(0, Number(process.env.ACP_TEST_SLOW_MS) || 0)

// log appends one event synchronously, so a test that reads the file right after sees it.
function log (event, fields = {}) {
  if (!logFile) return
  try {
    fs.appendFileSync(logFile, JSON.stringify({ pid: process.pid, event, ...fields }) + '\n')
  } catch (err) {
    process.stderr.write(`agent.mjs: cannot log to ${logFile}: ${err.message}\n`)
  }
}

let exited = false
function exitCleanly (why) {
  if (exited) return
  exited = true
  log('exit', { why })
  process.exit(0)
}

log('start', { argv: process.argv.slice(2) })

// ACP_TEST_GRANDCHILD starts a process of the agent's own (as a coding agent starts a dev
// server or a shell), which the agent never ends: Parley must, whatever happens to it.
if (process.env.ACP_TEST_GRANDCHILD) {
  const { spawn } = await import('node:child_process')
  const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' })
  log('grandchild', { child: g.pid })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const text = (t) => ({ type: 'text', text: t })
const messageOf = (err) => (err && typeof err.message === 'string' ? err.message : String(err))

// Cancelled is thrown inside a turn when a session/cancel came for its session.
class Cancelled extends Error {}

// sessions: sessionId -> { id, cwd, history: [{role: 'user'|'agent', text}], turn }
const sessions = new Map()

function sessionFile (id) {
  return path.join(sessionsDir, `${encodeURIComponent(id)}.json`)
}

function saveSession (s) {
  if (!sessionsDir) return
  try {
    fs.mkdirSync(sessionsDir, { recursive: true })
    fs.writeFileSync(sessionFile(s.id), JSON.stringify({ id: s.id, cwd: s.cwd, history: s.history }, null, 2))
  } catch (err) {
    process.stderr.write(`agent.mjs: cannot save session ${s.id}: ${err.message}\n`)
  }
}

// outside joins cwd and a name one level up without normalising, so the ".." reaches the client.
const outside = (cwd, name) => cwd.replace(/\/+$/, '') + '/../' + name

// The raw params of each initialize request, by JSON-RPC id, to log what the client sent
// before the SDK's schema fills in defaults (or swaps a malformed capability for its default).
const rawInitialize = new Map()

// Words choose the scenario, first match in this order; a word matches whole (\b…\b).
const scenarios = [
  ['die', /\bdie\b/],
  ['fail', /\bfail\b/],
  ['refuse', /\brefuse\b/],
  ['silent', /\bsilent\b/],
  ['stubborn', /\bstubborn\b/],
  ['long', /\blong\b/],
  ['escape', /\bescape\b/],
  ['read', /\bread\b/],
  ['elicit', /\belicit\b/],
  ['plan', /\bplan\b/],
  ['markdown', /\bmarkdown\b/],
  ['edit twice', /\bedit\s+twice\b/],
  ['edit', /\bedit\b/],
  ['recall', /\brecall\b/]
]
function scenarioOf (promptText) {
  const lower = promptText.toLowerCase()
  for (const [name, re] of scenarios) if (re.test(lower)) return name
  return 'hello'
}

const MARKDOWN = '# Result\n\nHere is **bold** text and a list:\n\n- one\n- two\n\n```go\nfmt.Println("hi")\n```\n\n<img src=x onerror=alert(1)><div data-on:click="alert(1)">click</div>\n'
// Pieces of MARKDOWN that each cut through its syntax (heading, bold, list, fence, tags).
const MARKDOWN_PIECES = ['# Re', 'sult\n\nHere is *', '*bo', 'ld** text and a list:\n\n-', ' one\n- two\n\n``', '`go\nfmt.Println("hi")\n`', '``\n\n<img src=x on', 'error=alert(1)><div data-on:cl', 'ick="alert(1)">click</div>\n']
if (MARKDOWN_PIECES.join('') !== MARKDOWN) throw new Error('MARKDOWN_PIECES do not add up to MARKDOWN')

const EDIT_OPTIONS = [
  { optionId: 'allow-once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'allow-always', name: 'Always allow edits', kind: 'allow_always' },
  { optionId: 'reject-once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject-always', name: 'Never allow edits', kind: 'reject_always' }
]

const ELICIT_SCHEMA = {
  type: 'object',
  properties: {
    branch: { type: 'string', title: 'Branch', minLength: 1, maxLength: 40 },
    budget: { type: 'integer', title: 'Budget', minimum: 1, maximum: 100 },
    urgent: { type: 'boolean', title: 'Urgent' }
  },
  required: ['branch']
}

// Turn is one session/prompt: what it sends, and whether a session/cancel stopped it.
class Turn {
  constructor (client, session) {
    this.client = client
    this.session = session
    this.cancelled = false
    this.reply = '' // the agent text streamed so far, for the history
  }

  check () {
    if (this.cancelled) throw new Cancelled('cancelled')
  }

  update (update) {
    this.check()
    return this.client.notify(acp.methods.client.session.update, { sessionId: this.session.id, update })
  }

  async chunk (piece) {
    await this.update({ sessionUpdate: 'agent_message_chunk', content: text(piece) })
    this.reply += piece
  }

  // stream sends pieces as agent_message_chunk updates with the slow delay between them.
  async stream (pieces, minDelay = 0) {
    const delay = Math.max(minDelay, slowMs)
    for (let i = 0; i < pieces.length; i++) {
      if (i > 0 && delay > 0) await sleep(delay)
      await this.chunk(pieces[i])
    }
  }

  // say streams text split into pieces of three words (each keeping its whitespace).
  say (t) {
    const words = t.split(/(?<=\s)(?=\S)/)
    const pieces = []
    for (let i = 0; i < words.length; i += 3) pieces.push(words.slice(i, i + 3).join(''))
    return this.stream(pieces)
  }

  request (method, params) {
    this.check()
    return this.client.request(method, { sessionId: this.session.id, ...params })
  }

  path (name) {
    return path.join(this.session.cwd, name)
  }
}

// edit changes one file under the client's permission; it answers 'changed', 'left alone',
// or a sentence saying why neither; Cancelled when the client cancelled the question.
async function edit (turn, name, toolCallId) {
  const file = turn.path(name)
  let oldText = null
  try {
    oldText = (await turn.request(acp.methods.client.fs.readTextFile, { path: file })).content
  } catch (err) {
    if (err instanceof Cancelled) throw err
    oldText = null // absent (or unreadable): a new file
  }
  turn.check()
  const line = 'hello from the agent\n'
  const newText = oldText == null ? line : oldText + line
  const diff = { type: 'diff', path: file, oldText, newText }
  const title = `Edit ${name}`
  const locations = [{ path: file, line: 1 }]
  await turn.update({
    sessionUpdate: 'tool_call',
    toolCallId,
    title,
    kind: 'edit',
    status: 'pending',
    locations,
    content: [diff],
    rawInput: { path: file, content: newText }
  })
  let response
  try {
    response = await turn.request(acp.methods.client.session.requestPermission, {
      toolCall: { toolCallId, title, kind: 'edit', status: 'pending', locations, content: [diff] },
      options: EDIT_OPTIONS
    })
  } catch (err) {
    if (err instanceof Cancelled) throw err
    log('permission', { sessionId: turn.session.id, toolCallId, error: { code: err.code, message: messageOf(err) } })
    await turn.update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' })
    return `not asked (${messageOf(err)})`
  }
  const outcome = response?.outcome
  log('permission', { sessionId: turn.session.id, toolCallId, outcome })
  if (outcome?.outcome === 'cancelled') throw new Cancelled('permission cancelled')
  turn.check()
  const option = outcome?.outcome === 'selected' ? EDIT_OPTIONS.find((o) => o.optionId === outcome.optionId) : undefined
  if (option && option.kind.startsWith('allow')) {
    await turn.update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' })
    try {
      await turn.request(acp.methods.client.fs.writeTextFile, { path: file, content: newText })
    } catch (err) {
      if (err instanceof Cancelled) throw err
      await turn.update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' })
      return `not written (${messageOf(err)})`
    }
    await turn.update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' })
    return 'changed'
  }
  await turn.update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' })
  return option ? 'left alone' : `left alone (unknown outcome ${JSON.stringify(outcome)})`
}

// run plays one scenario and answers the turn's stop reason.
async function run (turn, scenario, earlierPrompts) {
  const sessionId = turn.session.id
  switch (scenario) {
    case 'die':
      await turn.chunk('Working on it')
      setTimeout(() => process.exit(3), 100)
      await new Promise(() => {}) // never answers
      break

    case 'fail':
      throw new acp.RequestError(-32603, 'the model is overloaded')

    case 'refuse':
      await turn.say("I can't help with that.")
      return 'refusal'

    case 'silent': {
      // An agent stuck without a word (on a network it cannot reach, say) for 60 s.
      for (let n = 0; n < 600 && !turn.cancelled; n++) await sleep(100)
      return turn.cancelled ? 'cancelled' : 'end_turn'
    }

    case 'stubborn': {
      // An agent that does not honour session/cancel: it goes on writing, for 60 s.
      for (let n = 1; n <= 600; n++) {
        await sleep(100)
        await turn.client.notify(acp.methods.client.session.update, { sessionId: turn.session.id, update: { sessionUpdate: 'agent_message_chunk', content: text(`more ${n} `) } })
      }
      return 'end_turn'
    }

    case 'long': {
      const pieces = []
      for (let n = 1; n <= 400; n++) pieces.push(`word ${n} `)
      await turn.stream(pieces, 25)
      return 'end_turn'
    }

    case 'escape': {
      const attempts = [
        ['read ../outside.txt', () => turn.request(acp.methods.client.fs.readTextFile, { path: outside(turn.session.cwd, 'outside.txt') })],
        ['read /etc/hostname', () => turn.request(acp.methods.client.fs.readTextFile, { path: '/etc/hostname' })],
        ['read link.txt', () => turn.request(acp.methods.client.fs.readTextFile, { path: turn.path('link.txt') })],
        ['write ../escaped.txt', () => turn.request(acp.methods.client.fs.writeTextFile, { path: outside(turn.session.cwd, 'escaped.txt'), content: 'escaped' })]
      ]
      const lines = []
      for (const [label, attempt] of attempts) {
        try {
          const result = await attempt()
          const content = typeof result?.content === 'string' ? result.content.slice(0, 40) : ''
          lines.push(`- ${label}: allowed (${content})`)
        } catch (err) {
          if (err instanceof Cancelled) throw err
          lines.push(`- ${label}: refused (${messageOf(err)})`)
        }
        turn.check()
      }
      await turn.say(lines.join('\n') + '\n')
      return 'end_turn'
    }

    case 'read': {
      const file = turn.path('README.md')
      const toolCallId = 'read-1'
      await turn.update({ sessionUpdate: 'tool_call', toolCallId, title: 'Read README.md', kind: 'read', status: 'in_progress', locations: [{ path: file }] })
      let content
      try {
        content = (await turn.request(acp.methods.client.fs.readTextFile, { path: file })).content
      } catch (err) {
        if (err instanceof Cancelled) throw err
        await turn.update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' })
        await turn.say(`I could not read README.md: ${messageOf(err)}`)
        return 'end_turn'
      }
      await turn.update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'completed', content: [{ type: 'content', content: text(content) }] })
      await turn.say(`README.md starts with: ${String(content).split('\n')[0]}`)
      return 'end_turn'
    }

    case 'elicit': {
      let response
      try {
        response = await turn.request(acp.methods.client.elicitation.create, { mode: 'form', message: 'Which branch should I use?', requestedSchema: ELICIT_SCHEMA })
      } catch (err) {
        if (err instanceof Cancelled) throw err
        log('elicitation', { sessionId, error: { code: err.code, message: messageOf(err) } })
        turn.check()
        await turn.say(`I could not ask: ${messageOf(err)}`)
        return 'end_turn'
      }
      log('elicitation', { sessionId, response })
      turn.check()
      switch (response?.action) {
        case 'accept': {
          const c = response.content ?? {}
          await turn.say(`Got branch ${c.branch}, budget ${c.budget} (${typeof c.budget}), urgent ${c.urgent}.`)
          break
        }
        case 'decline':
          await turn.say('You declined, so I stop here.')
          break
        case 'cancel':
          await turn.say('The question was cancelled.')
          break
        default:
          await turn.say(`I do not know the answer ${JSON.stringify(response?.action)}.`)
      }
      return 'end_turn'
    }

    case 'plan': {
      const entries = (statuses) => [
        { content: 'Read the code', priority: 'high', status: statuses[0] },
        { content: 'Change the code', priority: 'medium', status: statuses[1] },
        { content: 'Run the tests', priority: 'low', status: statuses[2] }
      ]
      await turn.update({ sessionUpdate: 'plan', entries: entries(['in_progress', 'pending', 'pending']) })
      if (slowMs > 0) await sleep(slowMs)
      await turn.update({ sessionUpdate: 'plan', entries: entries(['completed', 'in_progress', 'pending']) })
      await turn.say('Plan made.')
      return 'end_turn'
    }

    case 'markdown':
      await turn.stream(MARKDOWN_PIECES)
      return 'end_turn'

    case 'edit twice': {
      const notes = await edit(turn, 'notes.txt', 'edit-1')
      const todo = await edit(turn, 'todo.txt', 'edit-2')
      await turn.say(`notes.txt: ${notes}\ntodo.txt: ${todo}\n`)
      return 'end_turn'
    }

    case 'edit': {
      const result = await edit(turn, 'notes.txt', 'edit-1')
      const sentence = result === 'changed'
        ? 'I changed notes.txt.'
        : result === 'left alone' ? 'I left notes.txt alone.' : `notes.txt: ${result}`
      await turn.say(sentence)
      return 'end_turn'
    }

    case 'recall':
      await turn.say('Earlier prompts: ' + (earlierPrompts.length ? earlierPrompts.join(' | ') : 'none'))
      return 'end_turn'

    default:
      await turn.say('Hello from the test agent.')
      return 'end_turn'
  }
}

const app = acp.agent({ name: 'parley-test-agent' })
  .onRequest(acp.methods.agent.initialize, ({ params, requestId }) => {
    const raw = rawInitialize.get(requestId)
    rawInitialize.delete(requestId)
    log('initialize', {
      protocolVersion: params.protocolVersion,
      clientCapabilities: raw?.clientCapabilities, // as on the wire
      parsedClientCapabilities: params.clientCapabilities, // after the SDK's schema
      clientInfo: params.clientInfo ?? null
    })
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: Boolean(sessionsDir), promptCapabilities: { embeddedContext: !process.env.ACP_TEST_PLAIN_PROMPT, image: !process.env.ACP_TEST_PLAIN_PROMPT } },
      agentInfo: { name: 'parley-test-agent', version: '1.0.0' },
      authMethods: []
    }
  })
  .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
    if (process.env.ACP_TEST_HANG_NEW) return new Promise(() => {})
    if (!path.isAbsolute(params.cwd)) {
      throw acp.RequestError.invalidParams({ cwd: params.cwd }, 'cwd must be an absolute path')
    }
    const id = `sess-${randomUUID()}`
    sessions.set(id, { id, cwd: params.cwd, history: [], turn: null })
    log('new', { sessionId: id, cwd: params.cwd, mcpServers: params.mcpServers })
    // After the answer (already queued by the time a timer runs): an update the client may ignore.
    setTimeout(() => {
      client.notify(acp.methods.client.session.update, {
        sessionId: id,
        update: { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'test', description: 'a test command' }] }
      }).catch((err) => process.stderr.write(`agent.mjs: available_commands_update: ${err.message}\n`))
    }, 0)
    return { sessionId: id }
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const session = sessions.get(params.sessionId)
    if (!session) throw acp.RequestError.sessionNotFound(params.sessionId)
    const texts = params.prompt.filter((b) => b.type === 'text').map((b) => b.text)
    const promptText = texts.join('\n')
    // The last text block is the person's message; blocks before it are context (the
    // conversation so far, when a client starts a new session in one under way).
    const message = texts.length > 0 ? texts[texts.length - 1] : ''
    log('prompt', { sessionId: session.id, text: promptText, blocks: params.prompt })
    const earlierPrompts = session.history.filter((h) => h.role === 'user').map((h) => h.text)
    session.history.push({ role: 'user', text: message })
    const turn = new Turn(client, session)
    session.turn = turn
    try {
      const stopReason = await run(turn, scenarioOf(message), earlierPrompts)
      return { stopReason: turn.cancelled ? 'cancelled' : stopReason }
    } catch (err) {
      if (err instanceof Cancelled || turn.cancelled) return { stopReason: 'cancelled' }
      throw err
    } finally {
      if (session.turn === turn) session.turn = null
      if (turn.reply) session.history.push({ role: 'agent', text: turn.reply })
      saveSession(session)
    }
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log('cancel', { sessionId: params.sessionId })
    const turn = sessions.get(params.sessionId)?.turn
    if (turn) turn.cancelled = true
  })

if (sessionsDir) {
  app.onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    log('load', { sessionId: params.sessionId, cwd: params.cwd })
    if (!path.isAbsolute(params.cwd)) {
      throw acp.RequestError.invalidParams({ cwd: params.cwd }, 'cwd must be an absolute path')
    }
    let saved
    try {
      saved = JSON.parse(fs.readFileSync(sessionFile(params.sessionId), 'utf8'))
    } catch {
      throw acp.RequestError.sessionNotFound(params.sessionId)
    }
    const session = { id: params.sessionId, cwd: params.cwd, history: Array.isArray(saved.history) ? saved.history : [], turn: null }
    // Replay the conversation before answering the load request.
    for (const h of session.history) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: session.id,
        update: { sessionUpdate: h.role === 'user' ? 'user_message_chunk' : 'agent_message_chunk', content: text(h.text) }
      })
    }
    sessions.set(session.id, session)
    return {}
  })
}

const wire = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin))
// Note the raw params of initialize requests as they pass to the SDK (nothing is changed).
const readable = wire.readable.pipeThrough(new TransformStream({
  transform (message, controller) {
    if (message && message.method === acp.methods.agent.initialize && 'id' in message) {
      rawInitialize.set(message.id, message.params)
    }
    controller.enqueue(message)
  }
}))
const connection = app.connect({ readable, writable: wire.writable })

process.stdout.on('error', () => exitCleanly('stdout closed'))
process.on('SIGTERM', () => exitCleanly('SIGTERM'))
connection.closed.then(() => exitCleanly('stdin closed'))
