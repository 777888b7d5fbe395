// Parley as an installed web app: the manifest parses and its icons load, the service worker
// (/sw.js) takes the whole site without sign-in, a push shows its notification (delivered by
// the DevTools protocol, as DevTools' own "Push" button does), a click on one opens the
// question in a Parley window, and Settings offers "Notify this device" under axe, light and
// dark, at 1280 and 390 px. Subscribing for real needs a push service this closed network
// does not reach, and Playwright's contexts are private windows, where Chromium has none: the
// tests stop at what the page says of that.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import vm from 'node:vm'
import { createECDH } from 'node:crypto'
import { startParley, launch, tempDB, results, root, axe, pageErrors } from './harness.mjs'
import { signUp, until } from './people.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

test('installable without sign-in: the manifest parses, its icons load, the worker takes the whole site', async () => {
  const parley = await startParley({ db: tempDB(), auth: 'local' })
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  try {
    const page = await context.newPage()
    const errors = pageErrors(page)
    await page.goto(parley.url + '/login')
    const cdp = await context.newCDPSession(page)

    const manifest = await cdp.send('Page.getAppManifest')
    assert.deepEqual(manifest.errors, [], 'Chromium parses the manifest')
    assert.match(manifest.url, /\/static\/manifest\.webmanifest\?v=\w+$/)
    const m = JSON.parse(manifest.data)
    assert.equal(m.name, 'Parley')
    assert.equal(m.start_url, '/')
    assert.equal(m.scope, '/')
    assert.equal(m.display, 'standalone')
    assert.ok(m.icons.some((i) => i.purpose === 'maskable'), 'a maskable icon')
    const apple = await page.locator('link[rel=apple-touch-icon]').getAttribute('href')
    for (const src of [...m.icons.map((i) => i.src), apple]) {
      const r = await page.evaluate(async (src) => {
        const r = await fetch(src)
        return { status: r.status, type: r.headers.get('content-type') }
      }, src)
      assert.deepEqual(r, { status: 200, type: 'image/png' }, src)
    }
    assert.equal(await page.locator('meta[name=theme-color]').count(), 2, 'a theme colour for light and for dark')

    // push.js registered the worker on the sign-in page; registering again is the same one.
    const reg = await page.evaluate(async () => {
      await navigator.serviceWorker.register('/sw.js')
      const r = await navigator.serviceWorker.ready
      return { scope: r.scope, script: r.active.scriptURL }
    })
    assert.deepEqual(reg, { scope: parley.url + '/', script: parley.url + '/sw.js' })
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null)
    const installable = await cdp.send('Page.getInstallabilityErrors')
    assert.deepEqual(installable.installabilityErrors.filter((e) => e.errorId !== 'in-incognito'), [], 'Chromium could install Parley (out of a private window)')

    // The worker caches nothing: a page it controls is the server's, as it is now.
    const again = await page.reload()
    assert.equal(again.status(), 200)
    assert.equal(again.fromServiceWorker(), false)
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('a push shows its question; a payload unread, or a link elsewhere, shows a safe one', async () => {
  const parley = await startParley({ db: tempDB() })
  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    const errors = pageErrors(page)
    await page.goto(parley.url + '/')
    await page.evaluate(() => navigator.serviceWorker.ready)
    await context.grantPermissions(['notifications'], { origin: parley.url })
    const cdp = await context.newCDPSession(page)
    const registrations = []
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations))
    await cdp.send('ServiceWorker.enable')
    const { registrationId } = await until(() => {
      const r = registrations.find((r) => !r.isDeleted)
      assert.ok(r, 'no registration yet')
      return r
    }, 'the worker\'s registration')
    const notifications = () => page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications())
      .map((n) => ({ title: n.title, body: n.body, url: n.data?.url, tag: n.tag, icon: n.icon, badge: n.badge })))
    const push = async (data, title) => {
      await cdp.send('ServiceWorker.deliverPushMessage', { origin: parley.url + '/', registrationId, data })
      return until(async () => {
        const n = (await notifications()).find((n) => n.title === title)
        assert.ok(n, 'not shown yet')
        return n
      }, `the notification “${title}”`)
    }

    const question = parley.url + '/questions/3'
    assert.deepEqual(await push(JSON.stringify({ title: 'Event planner asks you', body: 'City or area?', url: question }), 'Event planner asks you'), {
      title: 'Event planner asks you',
      body: 'City or area?',
      url: question,
      tag: question,
      icon: parley.url + '/static/icon-192.png',
      badge: parley.url + '/static/badge-96.png'
    })
    const start = parley.url + '/'
    let n = await push('not JSON', 'Parley: a question waits for you')
    assert.deepEqual([n.body, n.url, n.tag], ['', start, start])
    n = await push(JSON.stringify({ title: 'Elsewhere', url: 'https://evil.example/questions/3' }), 'Elsewhere')
    assert.equal(n.url, start, 'a link to another site opens Parley instead')
    assert.equal((await notifications()).length, 2, 'one notification a question: the unread one was replaced')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

// The worker's click on a notification, run in Node with a stand-in for the worker's global
// scope: the DevTools protocol cannot click a notification.
test('a click on a notification opens its question in a Parley window, never another site', async () => {
  const source = readFileSync(join(root, 'static', 'sw.js'), 'utf8')
  const origin = 'https://parley.example'
  const question = origin + '/questions/3'
  const click = async (url, windows, { navigable = true } = {}) => {
    const handlers = {}
    const did = []
    const win = (w) => ({
      ...w,
      async focus () { did.push(`focus ${w.url}`); return this },
      async navigate (to) {
        if (!navigable) throw new TypeError('This service worker is not the client\'s active service worker.')
        did.push(`navigate ${w.url} to ${to}`)
        return this
      }
    })
    const self = {
      location: new URL(origin + '/sw.js'),
      addEventListener: (type, fn) => { handlers[type] = fn },
      skipWaiting () {},
      registration: {},
      clients: {
        async claim () {},
        async matchAll (opts) { assert.deepEqual({ ...opts }, { type: 'window', includeUncontrolled: true }); return windows.map(win) },
        async openWindow (to) { did.push(`open ${to}`) }
      }
    }
    vm.runInNewContext(source, { self, URL })
    const waits = []
    handlers.notificationclick({ notification: { data: { url }, close () { did.push('close') } }, waitUntil: (p) => waits.push(p) })
    await Promise.all(waits)
    return did
  }
  assert.deepEqual(await click(question, []), ['close', `open ${question}`])
  assert.deepEqual(await click(question, [{ url: origin + '/inbox', focused: false }, { url: origin + '/', focused: true }]),
    ['close', `open ${question}`], 'a new window: the open ones keep what they hold')
  assert.deepEqual(await click(question, [{ url: origin + '/', focused: true }, { url: question, focused: false }]),
    ['close', `focus ${question}`], 'a window on the question is brought forward')
  const card = origin + '/c/4#q-' + question.split('/').pop()
  assert.deepEqual(await click(question, [{ url: origin + '/', focused: true }, { url: card, focused: false }]),
    ['close', `focus ${card}`], 'a window on its card in the conversation is brought forward')
  assert.deepEqual(await click('https://evil.example/questions/3', []), ['close', `open ${origin}/`])
  assert.deepEqual(await click(undefined, []), ['close', `open ${origin}/`])
})

test('Settings offers “Notify this device”, says what stops it, and passes axe light and dark at 1280 and 390 px', async () => {
  const parley = await startParley({ db: tempDB(), auth: 'local' })
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  try {
    const page = await signUp(context, parley.url, 'ann')
    const errors = pageErrors(page)
    await page.goto(parley.url + '/settings')
    const section = page.getByRole('region', { name: 'This device and others' })
    await section.getByText('gets a notification for every question for you, even with Parley closed').waitFor()
    const button = section.getByRole('button', { name: 'Notify this device' })
    await button.waitFor()
    await section.getByText('No device is notified yet.').waitFor()
    assert.ok(await section.getByText('This browser cannot notify this device').isHidden())
    await page.screenshot({ path: join(results, 'settings-devices.png'), fullPage: true })
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 })
      assert.ok(await page.evaluate((w) => document.documentElement.scrollWidth <= w, width), `no sideways scrolling at ${width} px`)
      await axe(page, `the settings' devices at ${width} px (light)`)
      await page.emulateMedia({ colorScheme: 'dark' })
      await axe(page, `the settings' devices at ${width} px (dark)`)
      await page.emulateMedia({ colorScheme: 'light' })
    }

    // Notifications not allowed: the status says how to allow them.
    const status = section.getByRole('status')
    await button.click()
    await status.filter({ hasText: /Notifications (are blocked|were not allowed)/ }).waitFor()

    // Allowed, with the server's key: the browser does not subscribe here, and says so.
    await context.grantPermissions(['notifications'], { origin: parley.url })
    const ec = createECDH('prime256v1')
    ec.generateKeys()
    await page.route('**/api/v1/push/key', (r) => r.fulfill({ json: { public_key: ec.getPublicKey().toString('base64url') } }))
    let posted = false
    await page.route('**/api/v1/push/subscriptions', (r) => { posted = true; r.fulfill({ status: 201 }) })
    await button.click()
    await status.filter({ hasText: 'The browser did not subscribe this device to push messages' }).waitFor()
    assert.equal(posted, false, 'nothing to give Parley')
    await axe(page, 'the settings\' devices with a refusal')

    // A browser without Web Push: no button, but what to do on an iPhone.
    const old = await context.newPage()
    await old.addInitScript(() => { delete window.PushManager })
    await old.goto(parley.url + '/settings')
    await old.getByText('On an iPhone or iPad, first add Parley to the Home Screen').waitFor()
    assert.equal(await old.getByRole('button', { name: 'Notify this device' }).count(), 0)
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})
