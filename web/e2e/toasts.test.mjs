// Toasts: brief words of what happened in the background, in a live region that screen
// readers read out: a question answered in another tab, a copy done. Several people and
// tabs at once: one answers, the others hear of it; the tab that answered is not told.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startParley, launch, tempDB, pageErrors, startConversation, axe } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('a question answered in one tab is a toast in the others; Copy says it copied', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: parley.url })
  const [a, b, c] = [await context.newPage(), await context.newPage(), await context.newPage()]
  const errors = [a, b, c].flatMap(pageErrors)
  try {
    await startConversation(a, parley.url, /Platform engineer/, 'Create a GitHub pull request for the login fix on branch feature/login')
    await a.getByLabel(/^Pull request title/).waitFor()
    for (const p of [b, c]) {
      await p.goto(a.url())
      await p.getByLabel(/^Pull request title/).waitFor()
    }

    // A answers: B and C are told, in their live region; A, which answered, is not.
    await a.getByLabel(/^Pull request title/).fill('Fix the login redirect')
    await a.locator('.question.pending').getByRole('button', { name: 'Submit' }).click()
    await a.locator('.question .outcome-answered').waitFor()
    for (const p of [b, c]) {
      const toast = p.getByRole('status').filter({ hasText: 'A question was answered elsewhere' })
      await toast.waitFor()
      await p.locator('.question .outcome-answered').waitFor()
    }
    await axe(b, 'a conversation with a toast, 390 px, dark')
    assert.equal(await a.locator('.toast').count(), 0, 'the tab that answered is told nothing')
    // A toast goes after a few seconds.
    await b.locator('.toast').waitFor({ state: 'detached', timeout: 10_000 })

    // Copy: the button says so, and so does a toast.
    await b.locator('#thread .msg.user').getByRole('button', { name: 'Copy text' }).click()
    await b.locator('.toast', { hasText: 'Copied to the clipboard' }).waitFor()
    assert.equal(await b.evaluate(() => navigator.clipboard.readText()), 'Create a GitHub pull request for the login fix on branch feature/login')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})
