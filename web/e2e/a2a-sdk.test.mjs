// Parley's A2A server and client against the official JS SDK (@a2a-js/sdk 1.x): its own
// client, natively in v1.0 and with its v0.3 transport, completes an input-required flow
// with Parley's server; a stream cut by Parley's stop ends with a status, not an empty
// result; and Parley completes a flow with a v1.0 agent built with the SDK's server.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { Role, TaskState } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client'
import { startParley, launch, tempDB, root } from './harness.mjs'
import { startV1Agent } from './a2a-v1-agent.mjs'

const token = 't0k3n'
const bearer = (token) => (url, init = {}) => {
  const headers = new Headers(init.headers)
  headers.set('Authorization', 'Bearer ' + token)
  return fetch(url, { ...init, headers })
}
const withToken = bearer(token)

// a2aClient runs `parley a2a-client` on the database: add prints the new client's token.
const a2aClient = (db, ...args) =>
  execFileSync(join(root, 'parley'), ['a2a-client', ...args, '--db', db], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim()

const textPart = (text) => ({ content: { $case: 'text', value: text }, mediaType: '', filename: '', metadata: undefined })
const userMessage = (text, { taskId = '', contextId = '' } = {}) => ({
  messageId: randomUUID(), contextId, taskId, role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: []
})
const textOf = (parts) => (parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('')

// drain reads a stream to its end: the task's ids, its last state and status text, and the
// artifact events.
async function drain (stream) {
  const out = { taskId: '', contextId: '', state: undefined, status: '', artifacts: [] }
  for await (const ev of stream) {
    const { $case, value } = ev.payload ?? {}
    if ($case === 'task') {
      out.taskId = value.id; out.contextId = value.contextId; out.state = value.status?.state
    } else if ($case === 'statusUpdate') {
      out.taskId ||= value.taskId; out.contextId ||= value.contextId
      out.state = value.status?.state; out.status = textOf(value.status?.message?.parts)
    } else if ($case === 'artifactUpdate') {
      out.artifacts.push(value)
    }
  }
  return out
}

// pullRequest asks Parley's platform engineer for a pull request, answers its form in text,
// and checks the result, through client (a v1.0 client or a v0.3 transport: the same calls).
async function pullRequest (client) {
  const first = await drain(client.sendMessageStream({ message: userMessage('Create a GitHub pull request for the login fix on branch feature/login') }))
  assert.equal(first.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the first turn ends waiting for input')
  assert.match(first.status, /Pull request title/)

  const task = await client.getTask({ id: first.taskId, historyLength: 10 })
  assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  assert.ok(task.history.length >= 1, 'the task has its history')

  const second = await drain(client.sendMessageStream({
    message: userMessage('Branch name: feature/login\nPull request title: Fix the login redirect\nBase branch: develop', { taskId: first.taskId, contextId: first.contextId })
  }))
  assert.equal(second.state, TaskState.TASK_STATE_COMPLETED, second.status)
  const partial = second.artifacts.filter((a) => a.artifact.name === 'partial_result')
  const final = second.artifacts.find((a) => a.artifact.name === 'final_result')
  assert.ok(partial.length > 0, 'the reply streams')
  assert.ok(partial.length < 20, `the reply streams in coalesced chunks, not per token (${partial.length} chunks)`)
  assert.equal(partial.at(-1).lastChunk, true, 'the last partial_result chunk says so')
  assert.ok(partial.slice(0, -1).every((a) => !a.lastChunk))
  assert.match(textOf(final.artifact.parts), /develop/)
  const done = await client.getTask({ id: first.taskId })
  assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED)
  assert.match(textOf(done.artifacts.at(-1).parts), /Fix the login redirect/)
}

let parley
before(async () => {
  parley = await startParley({ db: tempDB(), env: { PARLEY_A2A: '1', PARLEY_A2A_TOKEN: token } })
})
after(async () => { await parley?.stop() })

test('the JS SDK client in native v1.0 completes an input-required flow', async () => {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: withToken })
  }))
  const client = await factory.createFromUrl(parley.url + '/a2a/platform-engineer/')
  assert.equal(client.protocolVersion, '1.0', 'the card offers v1.0 and the client picks it')
  await pullRequest(client)
})

test('the JS SDK v0.3 transport completes the same flow', async () => {
  const card = await (await fetch(parley.url + '/a2a/platform-engineer/.well-known/agent-card.json')).json()
  assert.deepEqual(card.supportedInterfaces.map((i) => i.protocolVersion).sort(), ['0.3', '1.0'])
  const transport = new LegacyJsonRpcTransport({ endpoint: card.url, fetchImpl: withToken })
  assert.equal(transport.protocolVersion, '0.3')
  await pullRequest(transport)
})

test('a v1.0 call with an unknown version or method gets a v1.0 error', async () => {
  const call = async (headers, method) => (await withToken(parley.url + '/a2a/platform-engineer', {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { id: 'nope' } })
  })).json()
  const unknownTask = await call({ 'A2A-Version': '1.0' }, 'GetTask')
  assert.equal(unknownTask.id, 7)
  assert.equal(unknownTask.error.code, -32001)
  assert.equal(unknownTask.error.data[0].reason, 'TASK_NOT_FOUND')
  assert.equal((await call({ 'A2A-Version': '9.9' }, 'GetTask')).error.code, -32009)
  assert.equal((await call({ 'A2A-Version': '1.0' }, 'ListTasks')).error.code, -32601)
})

test('a stream that Parley stops under ends with a status, and the task goes on after the restart', async () => {
  const db = tempDB()
  const env = { PARLEY_A2A: '1', PARLEY_A2A_TOKEN: token, PARLEY_BUILTIN_PACE: '400ms' }
  let slow = await startParley({ db, env })
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: withToken })
  }))
  try {
    const client = await factory.createFromUrl(slow.url + '/a2a/event-planner/')
    const events = []
    let taskId = ''
    const read = (async () => {
      for await (const ev of client.sendMessageStream({ message: userMessage('Plan a birthday party for 30 people in Seattle on 2027-05-01 with a budget of $3000') })) {
        events.push(ev.payload)
        if (ev.payload.$case === 'task') taskId = ev.payload.value.id
        if (ev.payload.$case === 'artifactUpdate' && !stopping) stopping = slow.stop()
      }
    })()
    let stopping = null
    await read // no throw: the stream ended with an event the client can read
    await stopping
    const last = events.at(-1)
    assert.equal(last.$case, 'statusUpdate')
    assert.equal(last.value.status.state, TaskState.TASK_STATE_WORKING)
    assert.match(textOf(last.value.status.message.parts), /restarting/)

    slow = await startParley({ db, env: { ...env, PARLEY_BUILTIN_PACE: '2ms' } })
    const again = await factory.createFromUrl(slow.url + '/a2a/event-planner/')
    assert.ok(taskId, 'the stream named its task: ' + JSON.stringify(events.map((e) => e.$case)))
    const task = await again.getTask({ id: taskId })
    assert.notEqual(task.status.state, TaskState.TASK_STATE_FAILED, 'a task cut off by a stop is not failed')
    const rest = await drain(again.resubscribeTask({ id: taskId }))
    assert.ok([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_COMPLETED].includes(rest.state), `after the restart the task goes on (${TaskState[rest.state]})`)
    const now = await again.getTask({ id: taskId })
    assert.equal(now.status.state, rest.state, 'GetTask and the stream agree')
  } finally {
    await slow.stop()
  }
})

test('clients with tokens of their own: one does not find the other\'s task, and a revoked one\'s stream ends', async () => {
  const db = tempDB()
  const alphaToken = a2aClient(db, 'add', 'alpha')
  const betaToken = a2aClient(db, 'add', 'beta')
  const p = await startParley({ db, env: { PARLEY_A2A: '1', PARLEY_BUILTIN_PACE: '1s' } }) // the reply outlasts the revoke
  const clientOf = (token) => new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: bearer(token) })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: bearer(token) })
  })).createFromUrl(p.url + '/a2a/event-planner/')
  try {
    const alpha = await clientOf(alphaToken)
    const beta = await clientOf(betaToken)
    let taskId = ''
    let heard = null
    const heardOnce = new Promise((resolve) => { heard = resolve })
    const read = (async () => {
      for await (const ev of alpha.sendMessageStream({ message: userMessage('Plan a birthday party for 30 people in Seattle on 2027-05-01 with a budget of $3000') })) {
        if (ev.payload.$case === 'task') taskId = ev.payload.value.id
        if (ev.payload.$case === 'artifactUpdate') heard()
      }
    })()
    await heardOnce
    const notFound = (e) => e.name === 'TaskNotFoundError' && e.envelopeCode === -32001
    await assert.rejects(beta.getTask({ id: taskId }), notFound, 'GetTask of another client\'s task')
    await assert.rejects(beta.cancelTask({ id: taskId }), notFound, 'CancelTask of another client\'s task')
    // A stream's error comes as an SSE event, which the SDK throws as a plain Error.
    await assert.rejects(drain(beta.resubscribeTask({ id: taskId })), /Code: -32001.*TASK_NOT_FOUND/, 'SubscribeToTask of another client\'s task')
    assert.equal((await alpha.getTask({ id: taskId })).status.state, TaskState.TASK_STATE_WORKING, 'alpha\'s task goes on')

    assert.match(a2aClient(db, 'revoke', 'alpha'), /revoked/)
    await assert.rejects(read, /revoked/, 'the revoked client\'s stream ends, saying why')
    const refused = await bearer(alphaToken)(p.url + '/a2a/event-planner', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: taskId } })
    })
    assert.equal(refused.status, 401)
    assert.match(a2aClient(db, 'list'), /^alpha .+ \d{4}-\d\d-\d\d \d\d:\d\d$/m, 'the list shows alpha revoked')
  } finally {
    await p.stop()
  }
})

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('Parley completes an input-required flow with a v1.0 agent built with the JS SDK', async () => {
  const remote = await startV1Agent()
  const p = await startParley({ db: tempDB(), env: { PARLEY_A2A_AGENTS: remote.url } })
  const page = await browser.newPage()
  try {
    await page.goto(p.url + '/')
    await page.getByRole('radio', { name: /Greeter/ }).check()
    await page.getByLabel('Message', { exact: true }).fill('Hello')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('#thread').getByText('What is your name?').waitFor({ timeout: 20000 })
    await page.locator('#thread .question form textarea, #thread .question form input[type=text]').first().fill('Ada')
    await page.getByRole('button', { name: 'Submit' }).click()
    await page.locator('#thread').getByText('Hello, Ada!').waitFor({ timeout: 20000 })
    await page.locator('#state .state-done').waitFor()
    assert.ok(remote.seen.length >= 2)
    assert.ok(remote.seen.every((r) => r.version === '1.0' && /^[A-Z]/.test(r.method)), `Parley spoke v1.0: ${JSON.stringify(remote.seen)}`)
  } finally {
    await page.close()
    await p.stop()
    await remote.stop()
  }
})
