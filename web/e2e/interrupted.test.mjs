// A server killed while the agent streams: after restart the run is interrupted, its partial
// text is kept, and Retry runs the agent again to the end.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startParley, launch, tempDB } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('kill -9 mid-stream: interrupted, partial text kept, Retry finishes', async () => {
  const db = tempDB()
  let parley = await startParley({ db, env: { PARLEY_BUILTIN_PACE: '150ms' } })
  const page = await browser.newPage()
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Event planner/ }).check()
    await page.getByLabel('Message', { exact: true }).fill('Plan a corporate team building event for 30 people, budget $3000, downtown Seattle, Friday evening in 3 weeks, vegetarian and gluten-free options required')
    await page.getByRole('button', { name: 'Send' }).click()
    const streaming = page.locator('.msg.agent.streaming')
    await streaming.first().waitFor()
    await page.waitForFunction(() => document.querySelector('.msg.agent.streaming')?.innerText.split(/\s+/).length > 6)
    await parley.stop('SIGKILL')

    parley = await startParley({ db, addr: parley.addr, env: { PARLEY_BUILTIN_PACE: '1ms' } })
    await page.reload()
    await page.locator('#state .state-interrupted').waitFor()
    const partial = page.locator('.msg.agent', { has: page.locator('.badge', { hasText: 'interrupted' }) })
    assert.equal(await partial.count(), 1)
    assert.ok((await partial.innerText()).length > 20, 'the partial text is kept')

    await page.getByRole('button', { name: 'Retry' }).click()
    await page.locator('#state .state-done').waitFor({ timeout: 20000 })
    await page.locator('#thread').getByText('Your event plan').waitFor()
    assert.equal(await page.locator('.question').count(), 0, 'a complete request asks nothing')
    assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0)
  } finally {
    await page.close()
    await parley.stop()
  }
})
