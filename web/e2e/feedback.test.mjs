// What a person thought of a reply and of a question, said on the conversation's page: the
// toggles are buttons with aria-pressed, "Bad reply" opens "What was wrong?", the feedback is
// sent and kept, and the page passes axe at desk width in light and at phone width in dark;
// then staff work it through the review desk.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, pageErrors, startConversation, axe, results } from './harness.mjs'
import { until, signUp } from './people.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('feedback: a bad reply with a comment and a reason, a useful question, kept across a reload', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' })
  const page = await context.newPage()
  const errors = pageErrors(page)
  try {
    await startConversation(page, parley.url, /Platform engineer/, 'Create a GitHub pull request for the login fix on branch feature/login')
    await page.getByLabel(/^Pull request title/).fill('Fix the login redirect')
    await page.getByRole('button', { name: 'Submit' }).click()
    await page.locator('#state .state-done').waitFor({ timeout: 20000 })

    // The reply finished live offers its rating, nothing pressed.
    const reply = page.locator('.msg.agent').last()
    const good = reply.getByRole('button', { name: 'Good reply' })
    const bad = reply.getByRole('button', { name: 'Bad reply' })
    await bad.waitFor()
    assert.equal(await good.getAttribute('aria-pressed'), 'false')
    assert.equal(await bad.getAttribute('aria-pressed'), 'false')

    // Bad reply: pressed, and the form asks what was wrong.
    await bad.click()
    await reply.getByLabel('What was wrong?').waitFor()
    assert.equal(await reply.getByRole('button', { name: 'Bad reply' }).getAttribute('aria-pressed'), 'true')
    await axe(page, 'a conversation with the feedback form open, 1280 px, light')
    await reply.screenshot({ path: join(results, 'feedback-1280-light.png') })
    await reply.getByLabel('What was wrong?').fill('It did not say which reviewers it asked.')
    await reply.getByRole('checkbox', { name: 'wrong' }).check()
    await reply.getByRole('button', { name: 'Send feedback' }).click()
    await reply.getByRole('status').filter({ hasText: 'Thank you' }).waitFor()
    assert.equal(await reply.getByLabel('What was wrong?').count(), 0)

    // The answered question: useful.
    const card = page.locator('.question').first()
    await card.getByRole('button', { name: 'Useful question' }).click()
    await until(async () => assert.equal(await card.getByRole('button', { name: 'Useful question' }).getAttribute('aria-pressed'), 'true'), 'the question rated useful')

    // A reload shows what was said; pressing Good reply changes the opinion.
    await page.reload()
    const again = page.locator('.msg.agent').last()
    assert.equal(await again.getByRole('button', { name: 'Bad reply' }).getAttribute('aria-pressed'), 'true')
    assert.equal(await page.locator('.question').first().getByRole('button', { name: 'Useful question' }).getAttribute('aria-pressed'), 'true')
    await again.getByRole('button', { name: 'Good reply' }).click()
    await until(async () => assert.equal(await again.getByRole('button', { name: 'Good reply' }).getAttribute('aria-pressed'), 'true'), 'the reply rated good')
    assert.equal(await again.getByRole('button', { name: 'Bad reply' }).getAttribute('aria-pressed'), 'false')

    // At phone width in dark mode, by keyboard: Bad reply opens the form, which fits.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' })
    const small = await phone.newPage()
    const smallErrors = pageErrors(small)
    await small.goto(page.url())
    const last = small.locator('.msg.agent').last()
    await last.getByRole('button', { name: 'Bad reply' }).focus()
    await small.keyboard.press('Enter')
    const box = last.getByLabel('What was wrong?')
    await box.waitFor()
    const { width } = await box.boundingBox()
    assert.ok(width <= 390, `the comment box is ${width} px wide at 390 px`)
    assert.equal(await small.evaluate(() => document.documentElement.scrollWidth <= 390), true, 'the page does not scroll sideways')
    await axe(small, 'a conversation with the feedback form open, 390 px, dark')
    await last.screenshot({ path: join(results, 'feedback-390-dark.png') })
    await phone.close()
    assert.deepEqual(smallErrors, [])

    // Staff keep the reasons: a new one is offered on the next form.
    const conversation = page.url()
    await page.goto(parley.url + '/review')
    await page.getByRole('link', { name: 'Feedback reasons' }).click()
    await axe(page, 'the feedback reasons page')
    const list = page.getByLabel('Reasons, one a line')
    await list.fill((await list.inputValue()) + '\nout of date')
    await page.getByRole('button', { name: 'Save reasons' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await page.goto(conversation)
    const asked = page.locator('.question').first()
    await asked.getByRole('button', { name: 'Unneeded question' }).click()
    await asked.getByRole('checkbox', { name: 'out of date' }).waitFor()

    // Staff find it under Needs review, counted beside Review: they assign it, mark it
    // reviewed, and it leaves the queue.
    await page.goto(parley.url + '/review')
    assert.match(await page.locator('#review-count').innerText(), /^1/)
    await page.getByRole('link', { name: 'Needs review' }).click()
    const item = page.locator('.queue-item').first()
    await item.getByText('bad reply').waitFor()
    await axe(page, 'the review queue')
    const assignTo = item.getByLabel('Assign to')
    const me = (await assignTo.locator('option').allInnerTexts()).find((n) => n !== 'No one')
    await assignTo.selectOption({ label: me })
    await item.getByRole('button', { name: /^Assign / }).click()
    await page.waitForURL(/\/review\/queue/)
    assert.equal(await page.locator('.queue-item').first().getByLabel('Assign to').inputValue() !== '0', true)
    await page.locator('.queue-item').first().getByRole('button', { name: /^Mark reviewed/ }).click()
    await page.getByText('Nothing needs review').waitFor()
    assert.equal(await page.locator('#review-count').count(), 0)

    // The figures say what people thought, per agent.
    await page.goto(parley.url + '/review/figures')
    await page.getByRole('heading', { name: 'What people thought' }).waitFor()
    assert.match(await page.locator('.feedback-agents tfoot').innerText(), /Total/)
    await axe(page, 'the figures with what people thought')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

// The desk as two people use it: Ann rates a reply bad with a comment; Carol, staff, finds it
// under Needs review, reads the comment on the timeline, adds a note and a label, assigns it
// to herself and marks it reviewed, and it leaves the queue; Ann never sees the note or the
// label; Ann's new feedback brings the conversation back.
test('the desk: a person\'s bad reply reaches staff, who work it through; their notes stay theirs', async () => {
  const parley = await startParley({ db: tempDB(), auth: 'local' })
  const errors = []
  try {
    const carolContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' })
    const carol = await signUp(carolContext, parley.url, 'carol') // the first account is staff
    errors.push(pageErrors(carol))
    const annContext = await browser.newContext({ viewport: { width: 390, height: 844 } })
    const ann = await signUp(annContext, parley.url, 'ann')
    errors.push(pageErrors(ann))

    // Ann's reply, rated bad with a comment, on her phone.
    await startConversation(ann, parley.url, /Platform engineer/, 'Create a GitHub pull request for the login fix on branch feature/login')
    const conversation = ann.url()
    await ann.getByLabel(/^Pull request title/).fill('Fix the login redirect')
    await ann.getByRole('button', { name: 'Submit' }).click()
    await ann.locator('#state .state-done').waitFor({ timeout: 20000 })
    const reply = ann.locator('.msg.agent').last()
    await reply.getByRole('button', { name: 'Bad reply' }).click()
    await reply.getByLabel('What was wrong?').fill('It never said who reviews it.')
    await reply.getByRole('button', { name: 'Send feedback' }).click()
    await reply.getByRole('status').filter({ hasText: 'Thank you' }).waitFor()

    // Carol sees it counted beside Review, and finds it in the queue with who and what.
    await carol.goto(parley.url + '/')
    assert.match(await carol.locator('#review-count').innerText(), /^1/)
    await carol.getByRole('link', { name: /^Review/ }).first().click()
    await carol.getByRole('link', { name: 'Needs review' }).click()
    const item = carol.locator('.queue-item')
    assert.equal(await item.count(), 1)
    assert.match(await item.innerText(), /bad reply[\s\S]*ann with/)

    // The timeline has Ann's comment; Carol adds a label she keeps and a note.
    await carol.goto(parley.url + '/review/labels')
    await carol.getByLabel('Labels, one a line').fill('missing reviewers')
    await carol.getByRole('button', { name: 'Save labels' }).click()
    await carol.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await carol.goto(parley.url + '/review/queue')
    await carol.locator('.queue-item a').first().click()
    await carol.waitForURL(/\/timeline$/)
    await carol.getByText('It never said who reviews it.').waitFor()
    assert.match(await carol.locator('body').innerText(), /ann\s+rated a reply bad/)
    await carol.getByLabel('Note', { exact: true }).fill('Reviewers come from **CODEOWNERS**; told the builders.')
    await carol.getByRole('button', { name: 'Add note' }).click()
    await carol.locator('.note-entry strong', { hasText: 'CODEOWNERS' }).waitFor()
    await carol.getByLabel('Label', { exact: true }).selectOption('missing reviewers')
    await carol.getByRole('button', { name: 'Add label' }).click()
    await carol.getByRole('button', { name: 'Remove the label missing reviewers' }).waitFor()
    await axe(carol, 'a timeline with the person\'s comment, a note and a label, dark')

    // Assigned to Carol and marked reviewed, it leaves the queue and the count.
    await carol.goto(parley.url + '/review/queue')
    await item.getByLabel('Assign to').selectOption({ label: 'carol' })
    await item.getByRole('button', { name: /^Assign / }).click()
    await until(async () => assert.match(await carol.locator('.queue-item select option:checked').innerText(), /carol/), 'assigned to carol')
    assert.match(await carol.locator('.queue-item .badge').allInnerTexts().then((b) => b.join(' ')), /missing reviewers/)
    await carol.locator('.queue-item').getByRole('button', { name: /^Mark reviewed/ }).click()
    await carol.getByText('Nothing needs review').waitFor()
    assert.equal(await carol.locator('#review-count').count(), 0)

    // Ann sees neither the note nor the label, on her conversation or its timeline.
    for (const path of [conversation, conversation + '/timeline']) {
      const resp = await ann.goto(path)
      assert.equal(resp.status(), 200)
      const text = await ann.locator('body').innerText()
      assert.doesNotMatch(text, /CODEOWNERS|missing reviewers|carol/, path)
    }

    // Ann thinks again: good, then bad once more. The new feedback brings it back to Carol.
    await ann.goto(conversation)
    const again = ann.locator('.msg.agent').last()
    await again.getByRole('button', { name: 'Good reply' }).click()
    await until(async () => assert.equal(await again.getByRole('button', { name: 'Good reply' }).getAttribute('aria-pressed'), 'true'), 'rated good')
    await again.getByRole('button', { name: 'Bad reply' }).click()
    await again.getByLabel('What was wrong?').fill('Still no reviewers.')
    await again.getByRole('button', { name: 'Send feedback' }).click()
    await again.getByRole('status').filter({ hasText: 'Thank you' }).waitFor()
    await carol.goto(parley.url + '/review/queue')
    assert.equal(await carol.locator('.queue-item').count(), 1)
    assert.match(await carol.locator('.queue-item').innerText(), /reviewed before by carol/)
    assert.match(await carol.locator('#review-count').innerText(), /^1/)
    await axe(carol, 'the review queue, dark')
    assert.deepEqual(errors.flat(), [])
  } finally {
    await parley.stop()
  }
})
