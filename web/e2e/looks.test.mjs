// How the main pages look, for the eye and for axe: home, a conversation with a question
// waiting, Review (as staff), Inbox and Settings, in the light and the dark theme, at desk
// (1280 × 800) and phone (390 × 844) size. Each is shot whole into
// test-results/looks/<page>-<theme>-<width>.png and passes axe (no critical or serious
// violation). One server and one browser: a staff person signs in once, and each theme and
// size is a context of its own with their session.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { launch, results, pageErrors, axe } from './harness.mjs'
import { mainPages, pendingField } from './main-pages.mjs'

const out = join(results, 'looks')
mkdirSync(out, { recursive: true })

const sizes = [{ width: 1280, height: 800 }, { width: 390, height: 844 }]
const themes = ['light', 'dark']

let browser, parley, pages, session
before(async () => {
  browser = await launch()
  const main = await mainPages(browser)
  parley = main.parley
  pages = main.pages
  session = main.session
})
after(async () => {
  await browser?.close()
  await parley?.stop()
})

const background = (page) => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)
const dark = (rgb) => rgb.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b) < 150

// ready waits for what each page is about to be there, and for its fonts.
async function ready (page, name) {
  switch (name) {
    case 'conversation':
      await page.getByLabel(pendingField).waitFor()
      break
    case 'review':
      await page.getByRole('heading', { level: 1 }).first().waitFor()
      break
  }
  await page.evaluate(() => document.fonts.ready)
}

const frames = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))

// shoot takes the whole page in a window as tall as the page: the bars that stay in view
// (the top bar, the message box) are then drawn at the top and the bottom, where a reader
// finds them, not wherever the scroll left them.
async function shoot (page, size, path) {
  await page.evaluate(() => scrollTo(0, 0))
  const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body.scrollHeight))
  await page.setViewportSize({ width: size.width, height: Math.max(size.height, height) })
  await frames(page)
  await page.screenshot({ path, fullPage: true, animations: 'disabled' })
  await page.setViewportSize(size)
  await frames(page)
}

for (const theme of themes) {
  for (const size of sizes) {
    test(`the main pages, ${theme}, ${size.width} px: a screenshot each, and axe`, async () => {
      // The system's scheme and the person's choice (the cookie the theme toggle sets) agree.
      const context = await browser.newContext({ viewport: size, colorScheme: theme, storageState: session })
      await context.addCookies([{ name: 'parley_theme', value: theme, url: parley.url }])
      const page = await context.newPage()
      const errors = pageErrors(page)
      try {
        for (const [name, path] of Object.entries(pages)) {
          const res = await page.goto(parley.url + path)
          assert.equal(res.status(), 200, `${path} answers 200`)
          assert.equal(new URL(page.url()).pathname, path, `${path} is shown, not a sign-in`)
          await ready(page, name)
          assert.equal(dark(await background(page)), theme === 'dark', `${name} is drawn in the ${theme} theme`)
          await axe(page, `${name} (${path}), ${theme}, ${size.width} px`)
          await shoot(page, size, join(out, `${name}-${theme}-${size.width}.png`))
        }
        assert.deepEqual(errors, [])
      } finally {
        await context.close()
      }
    })
  }
}
