// The event planner end to end in a real browser: forms filled by their labels, an invalid
// answer rejected field by field, a reload and a kill -9 while a question is pending.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

async function submit (page) {
  await page.locator('.question.pending').getByRole('button', { name: 'Submit' }).click()
}

test('event planner: forms, invalid answer, reload, kill -9 and restart', async () => {
  const db = tempDB()
  let parley = await startParley({ db })
  const page = await browser.newPage({ viewport: { width: 1000, height: 1100 } })
  const errors = pageErrors(page)
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Event planner/ }).check()
    await page.getByLabel('Message', { exact: true }).fill('Plan a party for 30 people')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.waitForURL(/\/c\/\d+$/)

    // Form 1: where. The coordinator's text streamed in before it.
    await page.getByLabel('City or area').fill('Seattle')
    await assert.doesNotReject(page.locator('#thread').getByText('four specialists').waitFor())
    await submit(page)

    // The plan sits folded on the line above the message box: its summary says the step at
    // hand and how far along it is, with the "N updates" badge; opened, the current plan
    // unfolds with its history, and folds again.
    const plan = page.locator('#plan')
    await plan.locator('summary').first().waitFor()
    assert.match(await plan.locator('summary').first().innerText(), /Execution plan[\s\S]*of \d+ done/)
    const before = Number((await page.locator('#plan-updates').innerText()).split(' ')[0])
    assert.ok(before >= 2, `want several plan updates, got ${before}`)
    assert.equal(await plan.locator('.plan-current').isVisible(), false, 'folded at first')
    await plan.locator('summary').first().click()
    await plan.locator('.plan-current').waitFor()
    assert.ok(await page.locator('.plan-history').isVisible())
    await plan.locator('summary').first().click()
    await page.locator('#plan .plan-current').waitFor({ state: 'hidden' })
    assert.ok(await page.locator('#plan-updates').isVisible())

    // Form 2: a selection among three venues.
    const choice = page.getByLabel('Your choice')
    await choice.selectOption('south-lake-union-hall')
    await submit(page)

    // Form 3: the budget. An invalid answer comes back with the field's error and the value kept.
    const budget = page.getByLabel('Budget (USD)')
    await budget.fill('50')
    await submit(page)
    await page.getByText('Must be between 800 and 10,000,000.').waitFor()
    assert.equal(await budget.inputValue(), '50')
    await budget.fill('2500')
    await submit(page)

    // Form 4: approve the split. Reload first: the pending form is still there.
    await page.getByLabel('Decision').waitFor()
    await page.reload()
    await page.getByLabel('Decision').selectOption('approve')
    await page.screenshot({ path: join(results, 'planner-form.png'), fullPage: false })
    await submit(page)

    // Form 5: dietary needs, a multiselect.
    await page.getByLabel('Vegetarian').check()
    await page.getByLabel('Gluten-free').check()
    await submit(page)

    // Form 6 is pending when the server dies without warning.
    await page.getByLabel('Time of day').waitFor()
    await parley.stop('SIGKILL')
    await page.getByText('Reconnecting…').waitFor()
    parley = await startParley({ db, addr: parley.addr })
    await page.getByText('Reconnecting…').waitFor({ state: 'hidden', timeout: 15000 })

    const inThreeWeeks = new Date(Date.now() + 21 * 24 * 3600 * 1000).toISOString().slice(0, 10)
    await page.getByLabel(/^Date\b/).fill(inThreeWeeks)
    await page.getByLabel('Time of day').selectOption('evening')
    await submit(page)

    await page.locator('#thread').getByText('Your event plan').waitFor({ timeout: 20000 })
    await page.locator('#state .state-done').waitFor()
    await page.screenshot({ path: join(results, 'planner-finished.png'), fullPage: true })

    // Nothing doubled: one user message, six answered questions, unique message ids.
    assert.equal(await page.locator('.msg.user').count(), 1)
    assert.equal(await page.locator('.question').count(), 6)
    assert.equal(await page.locator('.question .outcome-answered').count(), 6)
    const ids = await page.locator('.msg.agent').evaluateAll((els) => els.map((e) => e.id))
    assert.equal(new Set(ids).size, ids.length, 'an agent message was shown twice')
    // The page after a fresh load shows the same thing as the live page.
    const live = await page.locator('#thread').innerText()
    await page.reload()
    assert.equal(await page.locator('#thread').innerText(), live)
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
  }
})

test('event planner: Enter starts, Cancel stops the planning at the budget split', async () => {
  const parley = await startParley({ db: tempDB() })
  const page = await browser.newPage()
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Event planner/ }).check()
    await page.getByLabel('Message', { exact: true }).fill('Plan a party for 30 people in Chicago')
    await page.getByLabel('Message', { exact: true }).press('Enter')
    await page.waitForURL(/\/c\/\d+$/)

    // The venues hold the date for a day: the form says by when to answer.
    await page.locator('.question.pending .deadline').waitFor()
    await page.getByLabel('Your choice').selectOption('river-north-loft')
    await submit(page)
    await page.getByLabel('Budget (USD)').fill('3000')
    await submit(page)

    await page.getByLabel('Decision').waitFor()
    await page.locator('.question.pending').getByRole('button', { name: 'Cancel' }).click()
    await page.locator('.question .outcome-cancelled').waitFor()
    await page.locator('#state .state-done').waitFor({ timeout: 15000 })
    assert.equal(await page.locator('.question.pending').count(), 0)
    assert.ok(await page.locator('#plan .step-skipped').count() > 0, 'the steps left are marked skipped')
  } finally {
    await page.close()
    await parley.stop()
  }
})
