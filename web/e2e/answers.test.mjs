// An answer's outcome is in its status (422 invalid, 409 resolved before) and the page still
// shows it: Datastar applies no patch from a response that is not a 200, so app.js hands it
// the card. The page here has no stream (its requests are cut), so the card it shows after
// each answer can only have come with that answer's response.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startParley, launch, tempDB, pageErrors, startConversation } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('answers: 422 keeps the form with its messages, 409 shows the card as it stands', async () => {
  const parley = await startParley({ db: tempDB() })
  const other = await browser.newPage()
  const page = await browser.newPage()
  const errors = pageErrors(page)
  try {
    // Another tab starts the conversation and sees the form.
    await startConversation(other, parley.url, /Platform engineer/, 'Create a GitHub pull request for the login fix on branch feature/login')
    await other.getByLabel(/^Pull request title/).waitFor()

    // This tab opens it with its stream cut: the form as the page was rendered, nothing more.
    await page.route('**/stream?*', (route) => route.abort())
    await page.goto(other.url())
    const form = page.locator('.question.pending')
    const description = page.getByLabel(/^Description/)
    await description.fill('Users landed on /home.')

    // Invalid: the title is missing. 422, and the form says so next to the field, with
    // everything typed kept.
    let res = page.waitForResponse((r) => r.url().endsWith('/answer'))
    await form.getByRole('button', { name: 'Submit' }).click()
    assert.equal((await res).status(), 422)
    await page.getByText('Pull request title is required.').waitFor()
    assert.equal(await description.inputValue(), 'Users landed on /home.')
    assert.equal(await page.getByLabel(/^Branch name/).inputValue(), 'feature/login')
    assert.equal(await page.getByLabel(/^Pull request title/).getAttribute('aria-invalid'), 'true')

    // The other tab answers.
    await other.getByLabel(/^Pull request title/).fill('Fix the login redirect')
    await other.locator('.question.pending').getByRole('button', { name: 'Submit' }).click()
    await other.locator('.question .outcome-answered').waitFor()

    // This tab, still showing the form, answers too: 409, and the card shows the answer given.
    await page.getByLabel(/^Pull request title/).fill('Another title')
    res = page.waitForResponse((r) => r.url().endsWith('/answer'))
    await form.getByRole('button', { name: 'Submit' }).click()
    assert.equal((await res).status(), 409)
    const card = page.locator('.question').first()
    await card.locator('.outcome-answered').waitFor()
    assert.match(await card.innerText(), /Fix the login redirect/)
    assert.doesNotMatch(await card.innerText(), /Another title/)
    assert.equal(await page.locator('.question.pending').count(), 0)
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await other.close()
    await parley.stop()
  }
})
