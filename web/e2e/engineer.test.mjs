// The platform engineer end to end: text streams in, a UserInputMetaData form with a prefilled
// value, the answer reaches the agent, and the message box sends on Enter (Shift+Enter: newline).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('platform engineer: streaming, a prefilled form, Enter to send', async () => {
  const parley = await startParley({ db: tempDB(), env: { PARLEY_BUILTIN_PACE: '15ms' } })
  const page = await browser.newPage({ viewport: { width: 1000, height: 1000 } })
  const errors = pageErrors(page)
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Platform engineer/ }).check()
    await page.getByLabel('Message', { exact: true }).fill('Create a GitHub pull request for the login fix on branch feature/login')
    await page.getByRole('button', { name: 'Send' }).click()

    const branch = page.getByLabel(/^Branch name/)
    await branch.waitFor()
    assert.equal(await branch.inputValue(), 'feature/login', 'the branch from the message is prefilled')
    await page.getByLabel(/^Pull request title/).fill('Fix the login redirect')
    await page.getByLabel(/^Description/).fill('Users landed on /home.\nNow they land where they were.')
    await page.getByLabel(/^Base branch/).selectOption('develop')
    await page.getByRole('button', { name: 'Submit' }).click()

    // The reply streams in (appended word by word) before it is rendered as Markdown.
    await page.locator('.msg.agent.streaming').first().waitFor()
    await page.locator('#thread').getByText('performed no external action').waitFor({ timeout: 20000 })
    await page.locator('#state .state-done').waitFor()
    const reply = await page.locator('.msg.agent').last().innerText()
    assert.match(reply, /feature\/login/)
    assert.match(reply, /develop/)
    assert.equal(await page.locator('.msg.agent.streaming').count(), 0)

    // The message box: Shift+Enter makes a new line, Enter sends.
    const box = page.getByLabel('Message', { exact: true })
    await box.click()
    await box.pressSequentially('Thanks!')
    await box.press('Shift+Enter')
    await box.pressSequentially('What else can you do?')
    await box.press('Enter')
    await page.locator('.msg.user').nth(1).waitFor()
    assert.equal(await page.locator('.msg.user').nth(1).locator('.author').innerText(), 'You')
    assert.equal(await page.locator('.msg.user').nth(1).locator('.body').innerText(), 'Thanks!\nWhat else can you do?')
    // The fresh message box comes with the send's answer, the message itself on the stream:
    // either may arrive first.
    await page.waitForFunction(() => document.getElementById('message').value === '')
    await page.locator('#state .state-done').waitFor({ timeout: 20000 })
    await page.screenshot({ path: join(results, 'engineer-finished.png'), fullPage: true })

    // The list shows the conversation with its state.
    await page.goto(parley.url + '/')
    const row = page.locator('.conversation-list li').first()
    assert.match(await row.innerText(), /Create a GitHub pull request[\s\S]*done/)
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
  }
})
