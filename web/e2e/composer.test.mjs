// The message box while a message is on its way: what the person types after pressing Enter,
// before the server's answer lands, is theirs and stays. Only the text that was sent leaves
// the box. The send is held on its way (a slow network) by routing the request.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startParley, launch, tempDB, pageErrors, startConversation } from './harness.mjs'
import { until } from './people.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('composer: text typed while a message is on its way is kept; the sent text leaves', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
  const page = await context.newPage()
  const errors = pageErrors(page)
  try {
    await startConversation(page, parley.url, /Platform engineer/, 'Create a GitHub pull request for the login fix on branch feature/login')
    await page.getByLabel(/^Pull request title/).waitFor()

    // Every send waits on its way until the test lets it go.
    let release = () => {}
    let arrived = () => {}
    await page.route('**/c/*/messages', async (route) => {
      const go = new Promise((resolve) => { release = resolve })
      arrived()
      await go
      await route.continue()
    })
    const box = page.getByLabel('Message', { exact: true })
    const nonce = () => page.locator('#composer-nonce').inputValue()

    // send presses Enter on text, does what the person does meanwhile, then lets it arrive
    // and waits for the server's answer (a new nonce).
    const send = async (text, meanwhile) => {
      const before = await nonce()
      const held = new Promise((resolve) => { arrived = resolve })
      await box.fill(text)
      await box.press('Enter')
      await held
      await meanwhile()
      release()
      await page.locator('.msg.user', { hasText: text }).first().waitFor()
      await until(async () => assert.notEqual(await nonce(), before), 'the server answered the send')
    }

    // A new message started over the sent one stays.
    await send('Use the title Fix the login redirect', () => box.fill('And ask Dana to review it'))
    assert.equal(await box.inputValue(), 'And ask Dana to review it')

    // Text added after the sent text: the sent part leaves, the rest stays.
    await box.fill('')
    await send('Also link issue 42', async () => {
      await box.press('End')
      await box.press('Shift+Enter')
      await box.pressSequentially('and issue 43')
    })
    assert.equal(await box.inputValue(), 'and issue 43')

    // Nothing typed meanwhile: the box is empty, ready for the next message.
    await box.fill('')
    await send('Thanks', async () => {})
    assert.equal(await box.inputValue(), '')

    // Enter again while one is on its way sends nothing more: the first arrives, and what
    // was typed waits in the box until it is sent in turn.
    let requests = 0
    page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/messages')) requests++ })
    await send('One more thing', async () => {
      await box.fill('And another')
      await box.press('Enter')
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)))
    })
    assert.equal(requests, 1, 'one request while the first was on its way')
    assert.equal(await box.inputValue(), 'And another')
    await send('And another', async () => {})
    assert.equal(await box.inputValue(), '')
    await page.reload()
    for (const text of ['One more thing', 'And another']) await page.locator('.msg.user', { hasText: text }).first().waitFor()

    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('composer: Escape in the message box closes an open plan and leaves the focus in the box', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  const errors = pageErrors(page)
  try {
    await startConversation(page, parley.url, /Event planner/, 'Plan a party for 30 people')
    const summary = page.locator('#plan summary').first()
    await summary.waitFor()
    await summary.focus()
    await page.keyboard.press('Enter')
    await page.locator('#plan .plan-current').waitFor()
    const box = page.getByLabel('Message', { exact: true })
    await box.focus() // by the keyboard's way, not a click (a click elsewhere closes it too)
    await box.pressSequentially('Also invite')
    await page.keyboard.press('Escape')
    await page.locator('#plan .plan-current').waitFor({ state: 'hidden' })
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'message', 'the focus stays in the message box')
    assert.equal(await box.inputValue(), 'Also invite')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('home: a starter of the chosen agent fills the message box with its words', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
  const page = await context.newPage()
  const errors = pageErrors(page)
  try {
    await page.goto(parley.url + '/')
    await page.getByRole('radio', { name: /Event planner/ }).check()
    const starter = page.locator('.starters:not([hidden]) button.starter').first()
    const words = (await starter.innerText()).trim()
    assert.ok(words.length > 0)
    await starter.click()
    assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), words)
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})
