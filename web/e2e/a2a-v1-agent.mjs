// A remote A2A v1.0 agent built with the official JS SDK (@a2a-js/sdk 1.x, native v1.0,
// no compatibility layer): it asks the person's name (input-required), then greets them in a
// text artifact and completes. startV1Agent serves it on a free port of 127.0.0.1.
import express from 'express'
import { randomUUID } from 'node:crypto'
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk'
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'

const textPart = (text) => ({ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined })
const agentMessage = (taskId, contextId, text) => ({
  messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: []
})
const now = () => new Date().toISOString()
const textOf = (msg) => (msg?.parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('')
// nameOf reads the answer: from a DataPart of values (Parley sends one), else the text.
const nameOf = (msg) => {
  const data = (msg?.parts ?? []).find((p) => p.content?.$case === 'data')?.content.value
  const values = data?.values ?? data
  return typeof values?.answer === 'string' ? values.answer : textOf(msg).trim()
}

class AskThenGreet {
  async execute ({ taskId, contextId, task, userMessage }, bus) {
    if (!task) {
      bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now() }, history: [userMessage], artifacts: [], metadata: undefined }))
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: agentMessage(taskId, contextId, 'What is your name?'), timestamp: now() } }))
      return
    }
    bus.publish(AgentEvent.task(task))
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: { state: TaskState.TASK_STATE_WORKING, timestamp: now() } }))
    bus.publish(AgentEvent.artifactUpdate({
      taskId, contextId, append: false, lastChunk: true, metadata: undefined,
      artifact: { artifactId: randomUUID(), name: 'greeting', description: '', parts: [textPart(`Hello, ${nameOf(userMessage)}!`)], metadata: undefined, extensions: [] }
    }))
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: now() } }))
  }

  async cancelTask (taskId, bus) {
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', metadata: undefined, status: { state: TaskState.TASK_STATE_CANCELED, timestamp: now() } }))
  }
}

// startV1Agent resolves with the agent's base URL, the requests it got (method and
// A2A-Version), and a stop function.
export function startV1Agent () {
  const app = express()
  const seen = []
  app.use(express.json({ limit: '10mb' }), (req, _res, next) => {
    if (req.method === 'POST') seen.push({ method: req.body?.method, version: req.header('A2A-Version') ?? '' })
    next()
  })
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const base = `http://127.0.0.1:${server.address().port}`
      const card = {
        name: 'Greeter', description: 'Asks your name, then greets you.', version: '1.0.0',
        supportedInterfaces: [{ url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
        capabilities: { streaming: true, pushNotifications: false, extensions: [] },
        securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
        skills: [{ id: 'greet', name: 'Greet', description: 'Greets you by name', tags: ['demo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
        signatures: []
      }
      const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new AskThenGreet())
      app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }))
      app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
      resolve({ url: base, seen, stop: () => new Promise((resolve) => server.close(resolve)) })
    })
  })
}
