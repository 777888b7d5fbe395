// The everyday chat around the forms, as a person uses it: the sidebar follows their
// conversations live, they rename, archive, find and come back to one; a question waiting
// shows in every tab's title and icon; dark mode follows the system or their choice; code is
// highlighted and copied; a phone shows every page without sideways scrolling. axe-core checks
// every page, light and dark, with a pending form, with errors and mid-stream: no critical or
// serious violation. Screenshots land in test-results/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors, startConversation, axe } from './harness.mjs'
import { startFakeOpenAI } from './fake-openai.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

const pages = ['/', '/inbox', '/search?q=party', '/archived', '/settings', '/review', '/review/figures', '/c/999']

async function startPlanner (page, url, text) {
  await startConversation(page, url, /Event planner/, text)
  await page.getByLabel('City or area').waitFor()
}

const background = (page) => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)
const dark = (rgb) => rgb.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b) < 150

test('sidebar, waiting count, rename, search, archive, themes, and axe on every page', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
  const page = await context.newPage()
  const other = await context.newPage()
  const errors = pageErrors(page)
  other.on('pageerror', (e) => errors.push(e.message))
  try {
    // Another tab on the home page hears of the question as it comes, and, hidden, with
    // notifications turned on (a click), tells of it. Headless Chromium shows no
    // notifications: the page's Notification records what it would show, and the tab is
    // made hidden.
    await other.addInitScript(() => {
      window.shown = []
      window.Notification = class {
        static permission = 'default'
        static async requestPermission () { window.Notification.permission = 'granted'; return 'granted' }
        constructor (title, opts) { window.shown.push(`${title}: ${opts.body}`) }
      }
    })
    await other.goto(parley.url + '/')
    assert.equal(await other.title(), 'Conversations · Parley')
    await other.getByRole('button', { name: 'Turn on notifications' }).click()
    await other.getByRole('button', { name: 'Turn off notifications' }).waitFor()
    await other.evaluate(() => Object.defineProperty(document, 'visibilityState', { get: () => 'hidden' }))
    await startPlanner(page, parley.url, 'Plan a party for 30 people')
    const path = new URL(page.url()).pathname
    await other.waitForFunction(() => document.title.startsWith('(1) '))
    const entry = other.locator('#sidebar-list a', { hasText: 'Plan a party for 30 people' })
    await entry.locator('.side-state', { hasText: 'waiting for you' }).waitFor()
    assert.match(await other.locator('link[rel=icon]').getAttribute('href'), /^data:image\/png/, 'the icon shows the count')
    assert.equal((await other.locator('#waiting-count').textContent()).replace(/\s+/g, ' ').trim(), '1 waiting')
    assert.deepEqual(await other.evaluate(() => window.shown), ['Parley: an agent is asking you: Plan a party for 30 people'])
    assert.equal(await page.evaluate(() => window.Notification.permission), 'default', 'nobody was asked on load')
    await page.waitForFunction(() => document.title.startsWith('(1) '))
    assert.equal(await page.locator('#sidebar-list a[aria-current=page]').innerText().then((t) => t.split('\n')[0]), 'Plan a party for 30 people')
    // The new question has the focus, and a time on every message.
    await page.waitForFunction(() => document.activeElement?.closest('.question.pending'))
    assert.ok(await page.locator('.msg.user time').count() >= 1)

    await axe(page, 'a conversation with a pending form')
    await page.screenshot({ path: join(results, 'shell-light.png') })
    await page.locator('.question.pending').getByRole('button', { name: 'Submit' }).click()
    await page.locator('.question.pending .field.invalid').first().waitFor()
    await axe(page, 'a form with errors')

    // Rename from the conversation's menu.
    await page.getByText('Manage', { exact: true }).click()
    await page.getByLabel('Title', { exact: true }).fill('Team party in June')
    await page.getByRole('button', { name: 'Rename' }).click()
    await page.locator('h1', { hasText: 'Team party in June' }).waitFor()
    await other.locator('#sidebar-list a', { hasText: 'Team party in June' }).waitFor()

    // Search from the sidebar finds it by a word of the message.
    await page.getByRole('searchbox', { name: 'Search your conversations' }).fill('party')
    await page.getByRole('searchbox', { name: 'Search your conversations' }).press('Enter')
    await page.waitForURL(/\/search\?q=party/)
    await page.locator('.hits a', { hasText: 'Team party in June' }).click()
    await page.waitForURL((u) => u.pathname === path)

    // Archive: out of the sidebar (in every tab), listed under Archived, and back.
    await page.getByText('Manage', { exact: true }).click()
    await page.getByRole('button', { name: 'Archive', exact: true }).click()
    await page.getByText('This conversation is archived').waitFor()
    await other.locator('#sidebar-list a', { hasText: 'Team party in June' }).waitFor({ state: 'detached' })
    await page.getByRole('link', { name: 'Archived', exact: true }).click()
    await page.getByRole('button', { name: /Unarchive/ }).click()
    await page.locator('#sidebar-list a', { hasText: 'Team party in June' }).waitFor()

    // Every page passes axe, in the light theme and then in the dark one (chosen here:
    // remembered across pages and reloads).
    for (const p of pages) {
      await page.goto(parley.url + p)
      await axe(page, `${p} (light)`)
    }
    await page.goto(parley.url + path)
    assert.ok(!dark(await background(page)), 'light by default')
    const toggle = page.locator('.theme-toggle')
    await toggle.click() // system → light
    await toggle.click() // light → dark
    assert.equal(await page.locator('html').getAttribute('data-theme'), 'dark')
    assert.ok(dark(await background(page)), 'dark when chosen')
    await page.reload()
    assert.ok(dark(await background(page)), 'still dark after a reload')
    await page.getByLabel('City or area').waitFor()
    await page.screenshot({ path: join(results, 'shell-dark.png') })
    for (const p of [path, ...pages]) {
      await page.goto(parley.url + p)
      await axe(page, `${p} (dark)`)
    }
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('the system dark theme is followed without a choice; the keyboard reaches everything', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ colorScheme: 'dark', viewport: { width: 1000, height: 800 } })
  const page = await context.newPage()
  try {
    await page.goto(parley.url + '/')
    assert.equal(await page.locator('html').getAttribute('data-theme'), null)
    assert.ok(dark(await background(page)), 'dark as the system is')
    await axe(page, 'home (system dark)')
    // The first Tab reaches the skip link, which moves past the bars to the content.
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to content')
    await page.keyboard.press('Enter')
    assert.equal(await page.evaluate(() => document.activeElement.id), 'content')
    // The agents are radios: arrows choose among them; Tab goes on to the message box.
    const radios = page.getByRole('radio')
    await radios.first().focus()
    await page.keyboard.press('ArrowDown')
    assert.ok(await radios.nth(1).isChecked(), 'an arrow chooses the next agent')
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate(() => document.activeElement.id), 'first-message')
    await page.keyboard.type('Plan a party for 30 people')
    // Every control of the top bar and the sidebar is reached by Tab, in order.
    const reached = new Set()
    await page.locator('.skip-link').focus()
    for (let i = 0; i < 16; i++) {
      await page.keyboard.press('Tab')
      reached.add(await page.evaluate(() => document.activeElement.getAttribute('aria-label') || document.activeElement.textContent.trim().split('\n')[0]))
    }
    for (const want of ['Conversations', 'Parley', 'Theme: system (change)', 'New conversation', 'Archived', 'Settings']) {
      assert.ok([...reached].some((r) => r.startsWith(want)), `Tab reaches ${want}: ${[...reached].join(', ')}`)
    }
    // The account menu opens from the keyboard, and Escape closes it, the focus back on it.
    const account = page.locator('.account-menu > summary')
    await account.focus()
    await page.keyboard.press('Enter')
    await page.getByRole('link', { name: 'Archived conversations' }).waitFor()
    await page.keyboard.press('Escape')
    await page.getByRole('link', { name: 'Archived conversations' }).waitFor({ state: 'hidden' })
    assert.equal(await page.evaluate(() => document.activeElement.closest('.account-menu') !== null), true, 'the focus is back on the menu')
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('the sign-in pages pass axe, light and dark', async () => {
  const parley = await startParley({ db: tempDB(), auth: 'local' })
  try {
    for (const colorScheme of ['light', 'dark']) {
      const context = await browser.newContext({ colorScheme, viewport: { width: 1000, height: 800 } })
      const page = await context.newPage()
      for (const p of ['/login', '/signup']) {
        await page.goto(parley.url + p)
        await axe(page, `${p} (${colorScheme})`)
      }
      await context.close()
    }
  } finally {
    await parley.stop()
  }
})

const codeReply = 'Here is the handler:\n\n```go\nfunc hello(w http.ResponseWriter, r *http.Request) {\n\tfmt.Fprintln(w, "hello") // greet\n}\n```\n\nAnd a very long line to scroll: `' + 'x'.repeat(300) + '`\n\n```go\n// ' + 'y'.repeat(300) + '\n```\n\nDone.'

test('code is highlighted as it streams, copied with one click, and axe passes mid-stream', async () => {
  const model = await startFakeOpenAI({ reply: codeReply, pace: 25 })
  const parley = await startParley({ db: tempDB(), env: { PARLEY_OPENAI_BASE_URL: model.url, PARLEY_OPENAI_MODEL: 'fake-model' } })
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: parley.url })
  const page = await context.newPage()
  const errors = pageErrors(page)
  try {
    await startConversation(page, parley.url, /fake-model/, 'Write me a Go handler')
    await page.locator('.msg.agent.streaming pre.chroma').first().waitFor()
    await axe(page, 'a reply mid-stream')
    await page.locator('#state .state-done').waitFor()
    // The reply ended: the message box has the focus back, and a screen reader heard the
    // reply once, whole.
    await page.waitForFunction(() => document.activeElement?.id === 'message')
    // The announcer speaks a moment after it is emptied (so that the same text is heard again).
    await page.waitForFunction(() => document.getElementById('announcer')?.textContent !== '')
    const heard = await page.locator('#announcer').textContent()
    assert.match(heard, /^fake-model: Here is the handler: func hello\(w http\.ResponseWriter/)
    assert.doesNotMatch(heard, /Copy/)
    assert.equal(await page.locator('#thread[aria-live]').count(), 0, 'the thread itself is not a live region')
    const block = page.locator('.msg.agent pre.chroma').first()
    const head = page.locator('.msg.agent .code-head').first()
    assert.ok(await block.locator('span[class]').count() > 3, 'the Go code is highlighted')
    assert.equal(await page.locator('.msg.agent [style]').count(), 0, 'no inline styles')
    await head.getByRole('button', { name: 'Copy code' }).click()
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), /fmt\.Fprintln\(w, "hello"\)/)
    await page.locator('.msg.agent').getByRole('button', { name: 'Copy reply' }).click()
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^Here is the handler:/)
    await axe(page, 'a finished reply with code')
    await page.locator('.msg.agent').first().screenshot({ path: join(results, 'code-light.png') })
    await page.evaluate(() => window.parleySetTheme('dark'))
    await page.locator('.msg.agent').first().screenshot({ path: join(results, 'code-dark.png') })
    await axe(page, 'code in the dark theme')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
    await model.close()
  }
})

test('a phone: no page scrolls sideways, the message box is in view, the sidebar is a drawer', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
  const page = await context.newPage()
  try {
    await startPlanner(page, parley.url, 'Plan a party for 30 people, see https://example.com/' + 'a-very-long-path-segment/'.repeat(12))
    const path = new URL(page.url()).pathname
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)
    assert.ok(await fits(), 'the conversation fits')
    await page.screenshot({ path: join(results, 'shell-phone.png') })
    await axe(page, 'a conversation on a phone')
    // The message box and Send are on screen without scrolling the thread.
    for (const el of [page.getByLabel('Message', { exact: true }), page.getByRole('button', { name: 'Send' })]) {
      const box = await el.boundingBox()
      assert.ok(box && box.y >= 0 && box.y + box.height <= 844 && box.x + box.width <= 390, `in view: ${JSON.stringify(box)}`)
    }
    // The sidebar opens as a drawer, and Escape closes it.
    const toggle = page.getByRole('button', { name: 'Conversations' })
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false')
    await toggle.click()
    await page.locator('#sidebar').getByRole('link', { name: /Plan a party/ }).waitFor()
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true')
    await page.keyboard.press('Escape')
    await page.locator('#sidebar').getByRole('link', { name: /Plan a party/ }).waitFor({ state: 'hidden' })
    for (const p of [...pages, path + '/timeline']) {
      await page.goto(parley.url + p)
      assert.ok(await fits(), `${p} scrolls sideways at 390 px`)
    }
    await page.goto(parley.url + '/inbox')
    await page.screenshot({ path: join(results, 'shell-phone-inbox.png') })
  } finally {
    await context.close()
    await parley.stop()
  }
})
