// A reply as a person watches it: formatted Markdown while it streams, the same once finished
// and after a reload; Stop (a click, or Esc in the message box) ends it at once, keeps its
// text and lets Retry go on; a message sent while the agent writes waits, and Send now stops
// the reply and has it answered.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors, startConversation } from './harness.mjs'
import { startFakeOpenAI } from './fake-openai.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

const reply = 'Here is **the plan** for `deploy`:\n\n1. Build it.\n2. Ship it.\n\n| Step | Time |\n|---|---|\n| build | 2 min |\n| ship | 1 min |\n\nThat is all, in *three* minutes or so.'

const start = (page, parley, text) => startConversation(page, parley.url, /fake-model/, text)

test('Markdown renders as it streams, and the finished message is what streamed', async () => {
  const model = await startFakeOpenAI({ reply, pace: 30 })
  const parley = await startParley({ db: tempDB(), env: { PARLEY_OPENAI_BASE_URL: model.url, PARLEY_OPENAI_MODEL: 'fake-model' } })
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
  const errors = pageErrors(page)
  try {
    await start(page, parley, 'How do we deploy?')
    // While it streams: bold and code already formatted, the list a list.
    const streaming = page.locator('.msg.agent.streaming')
    await streaming.locator('strong', { hasText: 'the plan' }).waitFor()
    await streaming.locator('code', { hasText: 'deploy' }).waitFor()
    await streaming.locator('ol li', { hasText: 'Ship it.' }).waitFor()
    assert.equal(await page.locator('.msg.agent.streaming').count(), 1, 'formatted while still streaming')
    assert.doesNotMatch(await streaming.innerText(), /\*\*the plan\*\*/)
    await page.screenshot({ path: join(results, 'streaming-markdown.png') })

    await page.locator('#state .state-done').waitFor()
    const body = page.locator('.msg.agent .body').last()
    const streamed = await body.innerHTML()
    assert.match(streamed, /<table>[\s\S]*<td>ship<\/td>/)
    assert.match(streamed, /<em>three<\/em>/)
    assert.doesNotMatch(streamed, /md-open|<i><\/i>/, 'no streaming scaffolding left')
    await page.reload()
    assert.equal(await page.locator('.msg.agent .body').last().innerHTML(), streamed, 'the reloaded page shows what streamed')
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
    await model.close()
  }
})

test('Stop ends the reply at once, keeps its text, and Retry goes on', async () => {
  const model = await startFakeOpenAI({ reply: 'word '.repeat(400).trim(), pace: 60 })
  const parley = await startParley({ db: tempDB(), env: { PARLEY_OPENAI_BASE_URL: model.url, PARLEY_OPENAI_MODEL: 'fake-model' } })
  const page = await browser.newPage()
  try {
    await start(page, parley, 'Talk for a while')
    await page.waitForFunction(() => document.querySelector('.msg.agent.streaming')?.innerText.split(/\s+/).length > 5)
    // The message box stays usable meanwhile.
    const box = page.getByLabel('Message', { exact: true })
    assert.equal(await box.isEditable(), true)
    await page.getByRole('button', { name: 'Stop' }).click()
    await model.aborted // the request to the model is given up
    await page.locator('#state .state-stopped').waitFor()
    const kept = page.locator('.msg.agent', { has: page.locator('.badge', { hasText: 'stopped' }) })
    await kept.waitFor()
    assert.ok((await kept.innerText()).split(/\s+/).length > 5, 'the text so far is kept')
    assert.equal(await page.getByRole('button', { name: 'Stop' }).isVisible(), false)

    await page.getByRole('button', { name: 'Retry' }).click()
    await page.locator('#state .state-done').waitFor()
    assert.equal(model.requests.length, 2)
  } finally {
    await page.close()
    await parley.stop()
    await model.close()
  }
})

test('Esc stops the reply; a message sent while the agent writes waits, and Send now stops the reply and has it answered', async () => {
  const model = await startFakeOpenAI({ reply: 'word '.repeat(400).trim(), pace: 60 })
  const parley = await startParley({ db: tempDB(), env: { PARLEY_OPENAI_BASE_URL: model.url, PARLEY_OPENAI_MODEL: 'fake-model' } })
  const page = await browser.newPage()
  try {
    await start(page, parley, 'Talk for a while')
    await page.locator('.msg.agent.streaming').waitFor()
    const box = page.getByLabel('Message', { exact: true })
    await box.click()
    await box.press('Escape')
    await page.locator('#state .state-stopped').waitFor()

    // A second round: the model streams again (a new conversation keeps the test short).
    const model2 = await startFakeOpenAI({ reply: 'word '.repeat(400).trim(), pace: 60 })
    const parley2 = await startParley({ db: tempDB(), env: { PARLEY_OPENAI_BASE_URL: model2.url, PARLEY_OPENAI_MODEL: 'fake-model' } })
    try {
      await start(page, parley2, 'Talk for a while')
      await page.locator('.msg.agent.streaming').waitFor()
      await box.fill('Actually, one line is enough.')
      await box.press('Enter')
      // It waits for the reply to end; Send now stops the reply and sends it.
      const queued = page.locator('#queued .msg.queued', { hasText: 'one line is enough' })
      await queued.waitFor()
      await queued.getByRole('button', { name: 'Send now' }).click()
      await page.locator('#thread .msg.user', { hasText: 'one line is enough' }).waitFor()
      await page.locator('#state .state-done').waitFor()
      assert.equal(await page.locator('.msg.agent .badge', { hasText: 'stopped' }).count(), 1, 'the first reply was stopped')
      const last = model2.requests.at(-1).messages.at(-1)
      assert.equal(last.role, 'user')
      assert.match(last.content, /one line is enough/)
    } finally {
      await parley2.stop()
      await model2.close()
    }
  } finally {
    await page.close()
    await parley.stop()
    await model.close()
  }
})
