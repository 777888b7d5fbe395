// A model-backed agent in the browser: Parley talks real HTTP to a fake OpenAI-compatible
// endpoint, the model's tool call becomes a form, and the answer reaches the model.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startParley, launch, tempDB } from './harness.mjs'
import { startFakeOpenAI } from './fake-openai.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('model-backed agent: tool call form, invalid answer, answer as the tool result', async () => {
  const model = await startFakeOpenAI()
  const parley = await startParley({
    db: tempDB(),
    env: { PARLEY_OPENAI_BASE_URL: model.url, PARLEY_OPENAI_MODEL: 'fake-model' }
  })
  const page = await browser.newPage()
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /fake-model/ }).check()
    await page.getByLabel('Message', { exact: true }).fill('Help me plan a product launch')
    await page.getByRole('button', { name: 'Send' }).click()

    await page.getByLabel(/^Audience/).selectOption('partners')
    await page.getByLabel(/^Attendees/).fill('900')
    await page.getByRole('button', { name: 'Submit' }).click()
    await page.getByText('Must be between 1 and 500.').waitFor()
    await page.getByLabel(/^Attendees/).fill('120')
    await page.getByRole('button', { name: 'Submit' }).click()

    await page.locator('#thread').getByText('with 120 attendees').waitFor({ timeout: 15000 })
    await page.locator('#state .state-done').waitFor()
    assert.match(await page.locator('.msg.agent strong').last().innerText(), /partners/)

    assert.equal(model.requests.length, 2)
    const msgs = model.requests[1].messages
    const tool = msgs[msgs.length - 1]
    assert.equal(tool.role, 'tool')
    assert.equal(tool.tool_call_id, 'call_1')
    assert.deepEqual(JSON.parse(tool.content).values, { audience: 'partners', attendees: 120 })
    assert.ok(model.requests[0].tools.some((t) => t.function.name === 'request_user_input'))
  } finally {
    await page.close()
    await parley.stop()
    await model.close()
  }
})
