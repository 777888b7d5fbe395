// A remote A2A agent inside Parley, end to end with real parts on both sides: one Parley
// serves its platform engineer over A2A; a second Parley uses it as a remote agent, and a
// person answers its input-required question through a form in the browser.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { startParley, launch, tempDB } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('remote A2A agent asks through input-required and finishes after the answer', async () => {
  const remote = await startParley({ db: tempDB(), env: { PARLEY_A2A: '1', PARLEY_A2A_TOKEN: 't0k3n' } })
  const db = tempDB()
  const config = join(dirname(db), 'parley.toml')
  writeFileSync(config, [
    '[[agents]]',
    'name = "remote-pe"',
    'title = "Remote platform engineer"',
    'backend = "a2a"',
    `card_url = "${remote.url}/a2a/platform-engineer"`,
    'api_key = "t0k3n"',
    ''
  ].join('\n'))
  const parley = await startParley({ db, env: { PARLEY_CONFIG: config } })
  const page = await browser.newPage()
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Remote platform engineer/ }).check()
    await page.getByLabel('Message', { exact: true }).fill('Create a GitHub pull request for the login fix on branch feature/login')
    await page.getByRole('button', { name: 'Send' }).click()

    const title = page.getByLabel(/^Pull request title/)
    await title.waitFor({ timeout: 20000 })
    await title.fill('Fix the login redirect')
    await page.getByLabel(/^Base branch/).selectOption('develop')
    await page.getByRole('button', { name: 'Submit' }).click()

    await page.locator('#thread').getByText('performed no external action').waitFor({ timeout: 20000 })
    await page.locator('#state .state-done').waitFor()
    const reply = await page.locator('.msg.agent').last().innerText()
    assert.match(reply, /feature\/login/)
    assert.match(reply, /develop/)
  } finally {
    await page.close()
    await parley.stop()
    await remote.stop()
  }
})
