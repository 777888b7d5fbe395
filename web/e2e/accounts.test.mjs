// Accounts end to end: the first account is staff; a person answers a question; staff find
// the conversation by a word of the answer and read its timeline; another person cannot
// open it; the figures page draws its charts. A person makes an access token on the settings
// page, sees it once, and revokes it.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, axe, pageErrors } from './harness.mjs'
import { signUp as signUpIn } from './people.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// signUp makes the person's account in a browser context of their own.
async function signUp (browser, url, name, viewport = { width: 1100, height: 1000 }) {
  return signUpIn(await browser.newContext({ viewport }), url, name)
}

test('staff find a conversation by a word of an answer; another person cannot open it', async () => {
  const parley = await startParley({ db: tempDB(), auth: 'local' })
  const errors = []
  try {
    // The first account is staff.
    const carol = await signUp(browser, parley.url, 'carol')
    carol.on('pageerror', (e) => errors.push(e.message))
    assert.ok(await carol.getByRole('link', { name: 'Review' }).isVisible(), 'the first account has the review desk')

    // Ann answers the planner's first question with a word nobody else uses.
    const ann = await signUp(browser, parley.url, 'ann')
    ann.on('pageerror', (e) => errors.push(e.message))
    assert.equal(await ann.getByRole('link', { name: 'Review' }).count(), 0, 'a later account is not staff')
    await ann.getByRole('radio', { name: /Event planner/ }).check()
    await ann.getByLabel('Message', { exact: true }).fill('Plan a party for 30 people')
    await ann.getByRole('button', { name: 'Send' }).click()
    await ann.waitForURL(/\/c\/\d+$/)
    const conversation = ann.url()
    await ann.getByLabel('City or area').fill('Kirkwood Gardens')
    await ann.locator('.question.pending').getByRole('button', { name: 'Submit' }).click()
    await ann.getByLabel('Your choice').waitFor()

    // Staff search for the word, open the timeline, and read who answered what and when.
    await carol.goto(parley.url + '/review')
    await carol.getByLabel('Search messages, answers and documents').fill('kirkwood')
    await carol.getByRole('button', { name: 'Show' }).click()
    const hit = carol.locator('.hit').first()
    await hit.waitFor()
    assert.match(await hit.innerText(), /Plan a party for 30 people[\s\S]*ann[\s\S]*in an answer/)
    assert.equal(await hit.locator('mark').first().innerText(), 'Kirkwood')
    await hit.getByRole('link', { name: 'Plan a party for 30 people' }).click()
    await carol.waitForURL(/\/timeline$/)
    const answered = carol.locator('.entry-resolved').first()
    assert.match(await answered.innerText(), /ann\s+answered question \d+, after/)
    assert.match(await answered.locator('.answers').innerText(), /City or area\s+Kirkwood Gardens/)
    assert.match(await carol.locator('.entry-question').first().innerText(), /City or area\s+text \(required\)/)
    await carol.screenshot({ path: join(results, 'staff-timeline.png'), fullPage: false })

    // Staff read the conversation itself, without a message box or a form to answer.
    await carol.goto(conversation)
    await carol.getByText('You are reading ann’s conversation as staff.').waitFor()
    assert.equal(await carol.locator('#composer').count(), 0)
    assert.equal(await carol.locator('.question.pending form').count(), 0)
    await carol.locator('.question .waiting-for', { hasText: 'Waiting for ann’s answer.' }).waitFor()

    // Bob, another person, finds nothing of it.
    const bob = await signUp(browser, parley.url, 'bob')
    bob.on('pageerror', (e) => errors.push(e.message))
    const resp = await bob.goto(conversation)
    assert.equal(resp.status(), 404)
    assert.doesNotMatch(await bob.locator('body').innerText(), /Kirkwood|Plan a party/)
    await bob.goto(parley.url + '/inbox')
    await bob.getByText('Nothing is waiting.').waitFor()
    assert.equal((await bob.goto(parley.url + '/review')).status(), 404)

    // The figures page draws today's question as a chart.
    await carol.goto(parley.url + '/review/figures?days=7')
    const chart = carol.getByRole('img', { name: /Questions per day/ })
    await chart.waitFor()
    assert.match(await chart.getAttribute('aria-label'), /2 questions asked, 1 answered/)
    await carol.screenshot({ path: join(results, 'staff-figures.png'), fullPage: true })
    assert.deepEqual(errors, [])
  } finally {
    await parley.stop()
  }
})

test('a person makes an access token on the settings page, sees it once, revokes it; at 390 px, light and dark', async () => {
  const parley = await startParley({ db: tempDB(), auth: 'local' })
  try {
    const page = await signUp(browser, parley.url, 'ann', { width: 390, height: 844 })
    const errors = pageErrors(page)
    const noSideways = async (what) => assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), `no sideways scrolling at 390 px: ${what}`)
    const bothThemes = async (what) => {
      await noSideways(what)
      await axe(page, `${what} (light, phone)`)
      await page.emulateMedia({ colorScheme: 'dark' })
      await axe(page, `${what} (dark, phone)`)
      await page.emulateMedia({ colorScheme: 'light' })
    }
    await page.goto(parley.url + '/settings')
    const tokens = page.getByRole('region', { name: 'Access tokens' })
    await tokens.getByText('You have no access tokens.').waitFor()
    assert.equal(await tokens.getByRole('link', { name: '/api/v1/openapi.json' }).getAttribute('href'), '/api/v1/openapi.json')

    // By keyboard: an empty name is refused next to the field.
    const name = page.getByLabel('Name of a new token')
    await name.focus()
    const posted = () => page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/settings/tokens'))
    let [resp] = await Promise.all([posted(), page.keyboard.press('Enter')])
    assert.equal(resp.status(), 422)
    await page.locator('#token-name-error', { hasText: 'Give the token a name' }).waitFor()
    assert.equal(await page.getByLabel('Name of a new token').getAttribute('aria-invalid'), 'true')
    assert.ok(await page.getByLabel('Name of a new token').evaluate((el) => el === document.activeElement), 'the refused name has the focus')

    // A token is made: shown once, read-only and selected by its focus, with how to use it.
    await page.getByLabel('Name of a new token').fill('laptop')
    ;[resp] = await Promise.all([posted(), page.getByLabel('Name of a new token').press('Enter')])
    assert.equal(resp.status(), 201)
    const box = page.getByLabel('Your new token “laptop”')
    await box.waitFor()
    const secret = await box.inputValue()
    assert.match(secret, /^parley_[A-Za-z0-9_-]{43}$/)
    assert.ok(!page.url().includes(secret), 'the token is not in the URL')
    assert.equal(await box.getAttribute('readonly'), '')
    assert.ok(await box.evaluate((el) => el === document.activeElement), 'the new token has the focus')
    await tokens.getByText('Copy it now: Parley will not show it again.').waitFor()
    assert.match(await tokens.innerText(), /export PARLEY_TOKEN=…[\s\S]*parley chat/)
    await page.keyboard.press('Control+a')
    assert.equal(await page.evaluate(() => { const el = document.activeElement; return el.value.slice(el.selectionStart, el.selectionEnd) }), secret, 'the token can be selected whole')
    await page.screenshot({ path: join(results, 'settings-new-token.png'), fullPage: true })
    await bothThemes('the settings page with a new token')

    // Seen once: the page lists the token by name, never the token itself.
    await page.goto(parley.url + '/settings')
    assert.doesNotMatch(await page.content(), /parley_[A-Za-z0-9_-]{43}/)
    const row = tokens.getByRole('row', { name: /laptop/ })
    assert.match(await row.innerText(), /laptop[\s\S]*never/)
    await bothThemes('the settings page listing a token')

    // Revoked by keyboard: the page says so, and lists none.
    await row.getByRole('button', { name: 'Revoke laptop' }).focus()
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/settings\?saved=revoked/)
    await tokens.getByRole('status').filter({ hasText: 'Token “laptop” revoked.' }).waitFor()
    await tokens.getByText('You have no access tokens.').waitFor()
    await bothThemes('the settings page after revoking a token')
    assert.deepEqual(errors, [])
  } finally {
    await parley.stop()
  }
})

test('past the limits the page says why and keeps what was typed', async () => {
  const parley = await startParley({ db: tempDB(), env: { PARLEY_MAX_STREAMS: '1', PARLEY_MESSAGE_RATE: '2' } })
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } })
  try {
    const first = await context.newPage()
    await first.goto(parley.url + '/')
    await first.getByRole('radio', { name: /Platform engineer/ }).check()
    await first.getByLabel('Message', { exact: true }).fill('hello')
    await first.getByRole('button', { name: 'Send' }).click()
    await first.waitForURL(/\/c\/\d+$/)
    await first.locator('#state .state-done').waitFor()

    // A second page of the same person, over the stream cap: told, and no retry storm.
    const second = await context.newPage()
    let streams = 0
    second.on('request', (r) => { if (r.url().includes('/stream')) streams++ })
    await second.goto(first.url())
    await second.getByRole('alert').filter({ hasText: 'Too many Parley pages are open' }).waitFor()
    await second.waitForTimeout(1500)
    assert.equal(streams, 1, 'the refused stream is not retried')
    await second.close()

    // The second message in a minute is the last one allowed; the third is refused, kept.
    await first.getByLabel('Message', { exact: true }).fill('and one more')
    await first.getByRole('button', { name: 'Send' }).click()
    await first.locator('.msg.user').nth(1).waitFor()
    await first.locator('#state .state-done').waitFor()
    await first.getByLabel('Message', { exact: true }).fill('too fast')
    await first.getByRole('button', { name: 'Send' }).click()
    await first.locator('#composer-error', { hasText: 'You are sending too fast' }).waitFor()
    assert.equal(await first.getByLabel('Message', { exact: true }).inputValue(), 'too fast')
  } finally {
    await context.close()
    await parley.stop()
  }
})
