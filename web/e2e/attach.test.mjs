// Refused attachments end to end: on the start page and in the message box, a file the server
// refuses (its content is not an accepted type) is named and marked, and every other file the
// person chose stays chosen, as does the text; removing the refused one and sending again works.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startParley, launch, tempDB, pageErrors } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

const good = { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('first note\n') }
const bad = { name: 'core.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]) }

test('a refused attachment keeps the other files and the text', async () => {
  const parley = await startParley({ db: tempDB() })
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
  const errors = pageErrors(page)
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Platform engineer/ }).check()
    await page.getByRole('textbox', { name: 'Message' }).fill('What is in these?')
    await page.locator('#first-files').setInputFiles([good, bad])
    await page.getByRole('button', { name: 'Send' }).click()
    await page.getByRole('alert').filter({ hasText: 'core.bin cannot be attached: it is binary data' }).waitFor()
    assert.equal(new URL(page.url()).pathname, '/', 'nothing was sent')
    assert.equal(await page.getByRole('textbox', { name: 'Message' }).inputValue(), 'What is in these?')
    const chips = page.locator('.new-conversation .attach-list li')
    assert.deepEqual(await chips.evaluateAll((ls) => ls.map((l) => l.className)), ['', 'bad'], 'the refused file is marked, the other kept')
    await page.getByRole('button', { name: 'Remove core.bin' }).click()
    await page.getByRole('button', { name: 'Send' }).click()
    await page.waitForURL(/\/c\/\d+$/)
    await page.locator('.msg.user .doc-chip', { hasText: 'notes.txt' }).waitFor({ timeout: 20000 })
    await page.locator('#state .state-done').waitFor({ timeout: 20000 })

    // The message box: the same, with the error patched in and the chips left as they were.
    const drop = async (name, body) => {
      const dt = await page.evaluateHandle(([name, body]) => {
        const dt = new DataTransfer()
        dt.items.add(new File([new Uint8Array(body)], name))
        return dt
      }, [name, [...body]])
      await page.locator('#composer').dispatchEvent('dragover', { dataTransfer: dt })
      await page.locator('#composer').dispatchEvent('drop', { dataTransfer: dt })
    }
    await drop('second.txt', Buffer.from('second note\n'))
    await drop('core.bin', bad.buffer)
    await page.getByRole('textbox', { name: 'Message' }).fill('And these?')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('#composer-error', { hasText: 'core.bin cannot be attached' }).waitFor()
    const list = page.locator('#composer .attach-list li')
    await page.locator('#composer .attach-list li.bad', { hasText: 'core.bin' }).waitFor()
    assert.equal(await list.count(), 2)
    assert.equal(await page.getByRole('textbox', { name: 'Message' }).inputValue(), 'And these?')
    await page.getByRole('button', { name: 'Remove core.bin' }).click()
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('.msg.user').nth(1).locator('.doc-chip', { hasText: 'second.txt' }).waitFor({ timeout: 20000 })
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
  }
})
