// Intake end to end: a 2,000-line log pasted with a one-line question becomes a user_context
// document (a chip that opens and downloads) that the agent reads; a short message passes
// untouched; files attached with the picker or dropped on the form become documents too.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// bigLog is a 2,000-line service log with a few errors among the noise.
function bigLog () {
  const lines = []
  for (let i = 0; i < 2000; i++) {
    const t = new Date(Date.UTC(2026, 10, 20, 9, 0, 0) + i * 1500).toISOString()
    if (i === 1234) lines.push(`${t} ERROR payments: charge failed for order 88123: card_declined (gateway=stripe)`)
    else if (i % 400 === 399) lines.push(`${t} WARN  http: slow request GET /api/orders took 2300ms`)
    else lines.push(`${t} INFO  http: GET /api/orders/${i} 200 12ms`)
  }
  return lines.join('\n')
}

test('a pasted log becomes a document the person opens and the agent reads', async () => {
  const parley = await startParley({ db: tempDB() })
  const page = await browser.newPage({ viewport: { width: 1000, height: 1000 } })
  const errors = pageErrors(page)
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Platform engineer/ }).check()
    const question = 'Why are payments failing since this morning?'
    const log = bigLog()
    await page.getByLabel('Message', { exact: true }).fill(question + '\n\n' + log)
    await page.getByRole('button', { name: 'Send' }).click()

    // The message is shown as written (folded), with the log as a chip.
    const msg = page.locator('.msg.user').first()
    const chip = msg.locator('.doc-chip .doc-open').first()
    await chip.waitFor({ timeout: 20000 })
    assert.match(await chip.innerText(), /user_context_1\.log/)
    assert.match(await msg.locator('.body').innerText(), /Why are payments failing/)
    const unfold = msg.getByRole('button', { name: /Show all \(2002 lines\)/ })
    await unfold.waitFor()
    const folded = await msg.locator('.body').boundingBox()
    await unfold.click()
    await msg.getByRole('button', { name: 'Show less' }).waitFor()
    assert.ok((await msg.locator('.body').boundingBox()).height > 10 * folded.height, 'Show all unfolds the message')
    await msg.getByRole('button', { name: 'Show less' }).click()
    await msg.locator('details.intent summary').click()
    assert.equal(await msg.locator('details.intent .plain').innerText(), question, 'the agent was given the question alone')

    // The agent read the log: its reply quotes the error line.
    await page.locator('#state .state-done').waitFor({ timeout: 20000 })
    const reply = (await page.locator('.msg.agent').allInnerTexts()).join('\n')
    assert.match(reply, /charge failed for order 88123: card_declined/)
    await page.screenshot({ path: join(results, 'intake-log.png'), fullPage: false })

    // The chip opens the document in a new tab, as plain text.
    const [tab] = await Promise.all([page.waitForEvent('popup'), chip.click()])
    await tab.waitForLoadState()
    const text = await tab.locator('body').innerText()
    assert.equal(text.split('\n').length, 2000)
    assert.match(text, /card_declined/)
    await tab.close()
    const [download] = await Promise.all([page.waitForEvent('download'), msg.locator('.doc-download').first().click()])
    assert.equal(download.suggestedFilename(), 'user_context_1.log')

    // A short message passes untouched: no document, nothing else given to the agent.
    await page.getByLabel('Message', { exact: true }).fill('Thanks, and what about the slow requests?')
    await page.getByRole('button', { name: 'Send' }).click()
    const second = page.locator('.msg.user').nth(1)
    await second.waitFor()
    await page.locator('#state .state-done').waitFor({ timeout: 20000 })
    assert.equal(await second.locator('.doc-chip').count(), 0)
    assert.equal(await second.locator('details.intent').count(), 0)
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
  }
})

test('files attached with the picker or dropped on the message box become documents', async () => {
  const parley = await startParley({ db: tempDB() })
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
  const errors = pageErrors(page)
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Platform engineer/ }).check()
    // A first message over the limit is refused on the home page too, and kept.
    const tooLong = 'z'.repeat(2 * 1000 * 1000)
    await page.getByLabel('Message', { exact: true }).fill(tooLong)
    await page.getByRole('button', { name: 'Send' }).click()
    await page.getByRole('alert').filter({ hasText: 'The message is too long (2.0 MB; at most 1.0 MB)' }).waitFor()
    assert.equal((await page.getByLabel('Message', { exact: true }).inputValue()).length, tooLong.length)
    assert.equal(new URL(page.url()).pathname, '/', 'nothing was sent')
    await page.getByLabel('Message', { exact: true }).fill('What went wrong in this run?')
    await page.locator('#first-files').setInputFiles({
      name: 'build.log', mimeType: 'text/plain',
      buffer: Buffer.from('2026-11-20T10:00:00Z INFO build started\n2026-11-20T10:00:05Z ERROR compile: undefined: parseConfig\n')
    })
    assert.match(await page.locator('.attach-list').innerText(), /build\.log/)
    await page.getByRole('button', { name: 'Send' }).click()
    const chip = page.locator('.msg.user .doc-chip').first()
    await chip.waitFor({ timeout: 20000 })
    assert.match(await chip.innerText(), /build\.log/)
    await page.locator('#state .state-done').waitFor({ timeout: 20000 })
    assert.match((await page.locator('.msg.agent').allInnerTexts()).join('\n'), /undefined: parseConfig/)

    // Drop a file on the composer: it is listed, can be removed, and a file over the
    // limit is refused in the browser with the text kept.
    const drop = async (name, body) => {
      const dt = await page.evaluateHandle(([name, body]) => {
        const dt = new DataTransfer()
        dt.items.add(new File([body], name, { type: 'text/plain' }))
        return dt
      }, [name, body])
      await page.locator('#composer').dispatchEvent('dragover', { dataTransfer: dt })
      await page.locator('#composer').dispatchEvent('drop', { dataTransfer: dt })
    }
    await drop('notes.txt', 'first note')
    await drop('other.txt', 'second note')
    const list = page.locator('#composer .attach-list li')
    assert.equal(await list.count(), 2)
    await page.getByRole('button', { name: 'Remove other.txt' }).click()
    assert.equal(await list.count(), 1)
    await drop('huge.txt', 'x'.repeat(12 * 1000 * 1000))
    await page.getByLabel('Message', { exact: true }).fill('Here are my notes')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('#composer-error', { hasText: 'huge.txt is 12.0 MB; a file can be at most 10.0 MB' }).waitFor()
    assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), 'Here are my notes', 'the text stays')
    await page.getByRole('button', { name: 'Remove huge.txt' }).click()

    // A paste over the 1 MB limit is refused in the browser, kept in the box, with a hint.
    // (Typing megabytes into a text box is slow on a busy machine: a generous deadline.)
    const paste = 'y'.repeat(1200 * 1000)
    await page.getByLabel('Message', { exact: true }).fill(paste, { timeout: 120000 })
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('#composer-error', { hasText: 'The message is too long (1.2 MB; at most 1.0 MB): attach a large text as a file instead.' }).waitFor({ timeout: 120000 })
    assert.equal((await page.getByLabel('Message', { exact: true }).inputValue()).length, paste.length)
    await page.getByLabel('Message', { exact: true }).fill('Here are my notes')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('.msg.user').nth(1).locator('.doc-chip', { hasText: 'notes.txt' }).waitFor()
    assert.equal(await page.locator('#composer .attach-list li').count(), 0, 'the composer is emptied once sent')
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
  }
})
