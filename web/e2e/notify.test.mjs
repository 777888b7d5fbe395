// Word of every question reaches its person wherever they are. Ann sets up a webhook and an
// ntfy topic on Settings and has a device notified (a Web Push subscription of a push
// service that checks the VAPID signature and decrypts the payload on its own: node's crypto
// and http_ece, internal/pushtest/pushservice.mjs). Then four kinds of agent ask her
// something: the built-in event planner, a model agent's request_user_input, the MCP
// reference server's elicitation, and a coding agent's permission request. Each question is
// announced on each channel exactly once, with a link to its own page; following the push's
// link signed out leads through signing in to the question, and she answers it there. The
// receivers run on loopback, which Parley reaches only because the operator allows it
// (PARLEY_CHANNEL_NETWORKS=127.0.0.1/32).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { createServer } from 'node:http'
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startParley, launch, tempDB, root, results, axe } from './harness.mjs'
import { startFakeOpenAI, startModel } from './fake-openai.mjs'
import { addPerson, signIn, password, until } from './people.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// startReceiver records what webhooks and ntfy topics are sent.
function startReceiver () {
  const got = []
  const server = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    got.push({ path: req.url, headers: req.headers, body })
    res.writeHead(200, { 'Content-Type': 'application/json' })
    res.end('{"id":"ok"}')
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    got,
    close: () => new Promise((r) => server.close(r))
  })))
}

// startPushService runs the test push service (a process of its own, as a push service is).
async function startPushService () {
  const proc = spawn('node', [join(root, 'internal', 'pushtest', 'pushservice.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', resolve)
    proc.once('exit', (code) => reject(new Error(`the push service exited with ${code}`)))
  })
  const { origin } = JSON.parse(first)
  const post = async (path, body) => (await fetch(origin + path, { method: 'POST', body: JSON.stringify(body) })).json()
  return {
    subscribe: () => post('/subscriptions', { mode: 'ok' }),
    received: async () => (await fetch(origin + '/received')).json(),
    stop: () => { proc.stdin.end(); proc.kill() }
  }
}

const everything = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')

// refModel calls the reference server's form tool, and says what came back.
function refModel () {
  return startModel((body, send) => {
    if (body.messages.at(-1).role === 'tool') {
      send({ role: 'assistant', content: 'The tool is done.' })
      send({}, 'stop')
      return
    }
    send({ role: 'assistant', content: '', tool_calls: [{ index: 0, id: 'call_ref', type: 'function', function: { name: 'ref__trigger-elicitation-request', arguments: '{}' } }] })
    send({}, 'tool_calls')
  })
}

test('a question of each kind of agent reaches ann once on her webhook, her ntfy topic and her device; the link leads through sign-in to it', async () => {
  const receiver = await startReceiver()
  const push = await startPushService()
  const model = await startFakeOpenAI()
  const ref = await refModel()
  const dir = mkdtempSync(join(tmpdir(), 'parley-notify-'))
  const work = join(dir, 'work')
  mkdirSync(work)
  writeFileSync(join(work, 'notes.txt'), 'first line\n')
  const config = join(dir, 'agents.toml')
  writeFileSync(config, `
[[agents]]
name = "launch"
title = "Launch planner"
base_url = "${model.url}"
model = "fake-model"

[[agents]]
name = "ref-tools"
title = "Reference tools"
base_url = "${ref.url}"
model = "fake-model"
  [[agents.mcp]]
  name = "ref"
  command = "node"
  args = ["${everything}", "stdio"]

[[agents]]
name = "coder"
title = "Coding agent"
backend = "acp"
command = "node"
args = [${JSON.stringify(join(root, 'backend', 'acp', 'testdata', 'agent.mjs'))}]
cwd = ${JSON.stringify(work)}
access = ["everyone"]
`)
  const db = tempDB()
  addPerson(db, 'ann')
  const parley = await startParley({ db, auth: 'local', env: { PARLEY_CONFIG: config, PARLEY_CHANNEL_NETWORKS: '127.0.0.1/32' } })
  const { context, page, errors } = await signIn(browser, parley.url, 'ann')
  try {
    // Settings: a webhook, an ntfy topic with its token, and this device (the push
    // service's subscription, given as the page gives a browser's).
    await page.goto(parley.url + '/settings')
    const channels = page.locator('#channels')
    await channels.getByLabel('Kind').selectOption('webhook')
    await channels.getByLabel('URL or address').fill(receiver.url + '/hooks/ann')
    await channels.getByRole('button', { name: 'Add' }).click()
    await page.waitForURL(/\/settings#channels$/)
    await channels.getByLabel('Kind').selectOption('ntfy')
    await channels.getByLabel('URL or address').fill(receiver.url + '/deploys-ann')
    await channels.getByLabel('Access token (ntfy, optional)').fill('tk_ann_secret')
    await channels.getByRole('button', { name: 'Add' }).click()
    await page.waitForURL(/\/settings#channels$/)
    await channels.locator('li', { hasText: '/deploys-ann' }).getByText('Nothing sent yet').waitFor()
    const sub = await push.subscribe()
    const status = await page.evaluate(async (sub) => (await fetch('/api/v1/push/subscriptions', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(sub)
    })).status, sub)
    assert.equal(status, 201, 'the page gives the subscription to Parley')
    await page.reload()
    await page.locator('#devices li', { hasText: 'Chrome on Linux' }).waitFor()
    await axe(page, 'Settings with a device and two channels')

    // Four agents ask; each question's id is its card's.
    const asked = []
    const ask = async (agent, text) => {
      await page.goto(parley.url + '/')
      await page.getByRole('radio', { name: agent }).check()
      await page.getByLabel('Message', { exact: true }).fill(text)
      await page.getByRole('button', { name: 'Send' }).click()
      await page.waitForURL(/\/c\/\d+$/)
      const card = page.locator('#thread section.question.pending').first()
      await card.waitFor({ timeout: 60_000 })
      const id = Number((await card.getAttribute('id')).replace('q-', ''))
      asked.push({ agent: String(agent), id, conversation: page.url() })
    }
    await ask(/Event planner/, 'Plan a party for 30 people')
    await ask(/Launch planner/, 'Plan our product launch')
    await ask(/Reference tools/, 'Fill in the form')
    await ask(/Coding agent/, 'Please edit the notes')

    // Each question, on each channel, once; the links lead to its own page.
    const link = (q) => `${parley.url}/questions/${q.id}`
    const pushes = await until(async () => {
      const got = (await push.received()).filter((p) => p.subscription === sub.endpoint)
      assert.equal(got.length, asked.length)
      return got
    }, 'a push per question', 60_000)
    await until(() => assert.equal(receiver.got.length, 2 * asked.length), 'a webhook and an ntfy post per question', 60_000)
    for (const q of asked) {
      const hooks = receiver.got.filter((r) => r.path === '/hooks/ann' && JSON.parse(r.body).parley.url === link(q))
      assert.equal(hooks.length, 1, `${q.agent}: one webhook post for question ${q.id}`)
      const ntfy = receiver.got.filter((r) => r.path === '/deploys-ann' && r.headers.click === link(q))
      assert.equal(ntfy.length, 1, `${q.agent}: one ntfy post for question ${q.id}`)
      assert.equal(ntfy[0].headers.authorization, 'Bearer tk_ann_secret')
      assert.ok(ntfy[0].headers.title && ntfy[0].headers.tags, `${q.agent}: ntfy's Title and Tags`)
      const p = pushes.filter((p) => p.payload?.url === link(q))
      assert.equal(p.length, 1, `${q.agent}: one push for question ${q.id}`)
      assert.equal(p[0].error, '', 'the push service took it')
      assert.equal(p[0].status, 201)
      assert.ok(p[0].payload.title && p[0].payload.body, 'the notification has a title and a body')
    }
    const { public_key: key } = await (await fetch(parley.url + '/api/v1/push/key')).json()
    assert.ok(pushes.every((p) => p.k === key), 'every push is signed with the key Parley gives browsers')

    // The planner's push, opened on a browser that is not signed in: sign in, and the
    // question is there to answer.
    const planner = asked[0]
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' })
    const other = await phone.newPage()
    await other.goto(pushes.find((p) => p.payload.url === link(planner)).payload.url)
    await other.waitForURL(/\/login\?next=/)
    await other.getByLabel('User name').fill('ann')
    await other.getByLabel('Password', { exact: true }).fill(password)
    await other.getByRole('button', { name: 'Sign in' }).click()
    await other.waitForURL(new RegExp(`/c/\\d+#q-${planner.id}$`))
    await other.getByLabel('City or area').fill('Seattle')
    await other.locator(`#q-${planner.id}`).getByRole('button', { name: 'Submit' }).click()
    await other.locator(`#q-${planner.id}`).getByText(/Answered/).first().waitFor()
    await other.screenshot({ path: join(results, 'notify-answered-from-the-link.png') })
    await phone.close()

    // The planner goes on and asks its next question: word of that one goes out too, and
    // still once per question; the channels say they delivered.
    await until(() => assert.equal(receiver.got.length, 2 * (asked.length + 1)), 'word of the planner\'s next question')
    const perQuestion = {}
    for (const r of receiver.got) {
      const url = r.path === '/hooks/ann' ? JSON.parse(r.body).parley.url : r.headers.click
      perQuestion[r.path + ' ' + url] = (perQuestion[r.path + ' ' + url] ?? 0) + 1
    }
    assert.ok(Object.values(perQuestion).every((n) => n === 1), `once per channel and question: ${JSON.stringify(perQuestion)}`)
    await page.goto(parley.url + '/settings')
    await channels.locator('li', { hasText: '/deploys-ann' }).getByText('Delivered').waitFor()
    await page.locator('#devices li', { hasText: 'Chrome on Linux' }).getByText('Delivered').waitFor()
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
    push.stop()
    await receiver.close()
    await model.close()
    await ref.close()
  }
})
