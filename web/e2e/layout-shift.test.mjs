// How much the page moves under the reader while a reply streams: the cumulative layout shift
// (the sum of the 'layout-shift' entries not caused by the person's own input) from the
// moment a message is sent until the run stops for the planner's first question, on a new
// conversation and on a follow-up, at desk (1280 px) and phone (390 px) width. Each shift's
// sources are kept as short selectors, to tell which elements move. The figures are printed
// and written to test-results/looks/cls.json. (Chromium marks the shifts within 500 ms of a
// click or a key as caused by input: those after the follow-up's Send are left out, and
// counted apart.)
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors } from './harness.mjs'
import { until } from './people.mjs'

// The bound a streaming reply must stay within.
const limit = 0.02

// The built-in agents' pace: the one a person sees (Parley's default), not the tests' 2 ms.
const pace = '25ms'

const out = join(results, 'looks')
mkdirSync(out, { recursive: true })

let browser, parley
const measured = {}
before(async () => {
  browser = await launch()
  parley = await startParley({ db: tempDB(), env: { PARLEY_BUILTIN_PACE: pace } })
})
after(async () => {
  await browser?.close()
  await parley?.stop()
  writeFileSync(join(out, 'cls.json'), JSON.stringify({ pace, limit, measured }, null, 2) + '\n')
})

// record keeps every layout shift of every page of the tab in sessionStorage (the first
// message leaves the home page for the conversation's), each with its sources as selectors.
function record () {
  const selector = (node) => {
    if (!node) return '(gone)'
    let el = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement
    const text = el !== node ? '::text' : ''
    const parts = []
    for (let i = 0; el && i < 4; i++, el = el.parentElement) {
      if (el.id) { parts.unshift('#' + el.id); break }
      const classes = [...el.classList].slice(0, 3).map((c) => '.' + c).join('')
      parts.unshift(el.localName + classes)
    }
    return parts.join(' > ') + text
  }
  new PerformanceObserver((list) => {
    const kept = JSON.parse(sessionStorage.getItem('shifts') || '[]')
    for (const e of list.getEntries()) {
      kept.push({
        page: location.pathname,
        at: Math.round(e.startTime),
        value: e.value,
        input: e.hadRecentInput,
        sources: (e.sources || []).map((s) => ({
          node: selector(s.node),
          from: [s.previousRect.x, s.previousRect.y, s.previousRect.width, s.previousRect.height].map(Math.round),
          to: [s.currentRect.x, s.currentRect.y, s.currentRect.width, s.currentRect.height].map(Math.round)
        }))
      })
    }
    sessionStorage.setItem('shifts', JSON.stringify(kept))
  }).observe({ type: 'layout-shift', buffered: true })
}

// shifts reads what was recorded since the last call, and forgets it.
async function shifts (page) {
  return page.evaluate(() => {
    const kept = JSON.parse(sessionStorage.getItem('shifts') || '[]')
    sessionStorage.setItem('shifts', '[]')
    return kept
  })
}

// summarize sums the shifts without recent input, finds the largest, and totals the value
// by source selector: a shift's value is shared among its sources by the area each covers
// before and after (the score is the area moved times the distance, for all sources at once).
function summarize (entries) {
  const counted = entries.filter((e) => !e.input)
  const cls = counted.reduce((a, e) => a + e.value, 0)
  const largest = counted.reduce((a, e) => (e.value > (a?.value ?? 0) ? e : a), null)
  const bySource = {}
  for (const e of counted) {
    const weights = e.sources.map((s) => area(s.from) + area(s.to))
    const total = weights.reduce((a, w) => a + w, 0)
    e.sources.forEach((s, i) => { bySource[s.node] = (bySource[s.node] ?? 0) + e.value * (total ? weights[i] / total : 1 / weights.length) })
    if (!e.sources.length) bySource[unattributed] = (bySource[unattributed] ?? 0) + e.value
  }
  const top = Object.entries(bySource).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([node, value]) => ({ node, value: round(value) }))
  return {
    cls: round(cls),
    shifts: counted.length,
    ignoredWithInput: { shifts: entries.length - counted.length, value: round(entries.filter((e) => e.input).reduce((a, e) => a + e.value, 0)) },
    largest: largest && { value: round(largest.value), page: largest.page, at: largest.at, sources: largest.sources },
    top,
    entries: counted.map((e) => ({ ...e, value: round(e.value) }))
  }
}
// Chromium names no node for a shift of a pseudo-element alone (such as the skeleton lines of
// a reply before its first words).
const unattributed = '(no node named: a pseudo-element)'
const area = ([, , w, h]) => w * h
const round = (v) => Math.round(v * 10000) / 10000

function report (name, s) {
  console.log(`${name}: CLS ${s.cls} over ${s.shifts} shifts (largest ${s.largest?.value ?? 0}; ${s.ignoredWithInput.shifts} after input left out, ${s.ignoredWithInput.value})`)
  for (const t of s.top) console.log(`  ${t.value.toFixed(4)}  ${t.node}`)
  if (s.largest) console.log(`  the largest, ${s.largest.value} at ${s.largest.at} ms on ${s.largest.page}: ${s.largest.sources.map((x) => `${x.node} [${x.from}]→[${x.to}]`).join('; ') || unattributed}`)
}

// settled waits for the run to stop at a question (its field) and the page to rest a moment
// (what comes with the run's end, such as the rating buttons, belongs to the streaming).
async function settled (page, reply, field) {
  await page.getByText(reply).first().waitFor({ timeout: 60_000 })
  await field.waitFor({ timeout: 60_000 })
  await until(async () => assert.match(await page.locator('#state').innerText(), /waiting/), 'the run waits for an answer')
  await page.waitForTimeout(1000)
}

for (const width of [1280, 390]) {
  test(`layout shift while the planner streams, ${width} px`, async (t) => {
    const context = await browser.newContext({ viewport: { width, height: width > 800 ? 800 : 844 }, colorScheme: 'light' })
    await context.addInitScript(record)
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      // A new conversation: from the Send on the home page to the first question.
      await page.goto(parley.url + '/')
      await page.getByRole('radio', { name: /Event planner/ }).check()
      await page.getByLabel('Message', { exact: true }).fill('Plan a party for 30 people')
      await shifts(page)
      await page.getByRole('button', { name: 'Send' }).click()
      await page.waitForURL(/\/c\/\d+$/)
      await settled(page, 'four specialists', page.getByRole('textbox', { name: 'City or area' }))
      const first = summarize(await shifts(page))

      // A follow-up, sent instead of answering, that says where: the venue specialist goes on
      // to offer venues, until it asks which.
      await page.getByLabel('Message', { exact: true }).fill('Make it 40 people in Seattle')
      await shifts(page)
      await page.getByRole('button', { name: 'Send' }).click()
      await settled(page, "I'll update the plan with", page.getByRole('combobox', { name: 'Your choice' }))
      const second = summarize(await shifts(page))

      measured[width] = { new: first, followUp: second }
      report(`${width} px, new conversation`, first)
      report(`${width} px, follow-up`, second)
      assert.deepEqual(errors, [])

      await t.test(`CLS ≤ ${limit} at ${width} px (new conversation ${first.cls}, follow-up ${second.cls})`, () => {
        assert.ok(first.cls <= limit, `new conversation: CLS ${first.cls} > ${limit}; most from ${first.top.slice(0, 3).map((s) => s.node).join(', ')}`)
        assert.ok(second.cls <= limit, `follow-up: CLS ${second.cls} > ${limit}; most from ${second.top.slice(0, 3).map((s) => s.node).join(', ')}`)
      })
    } finally {
      await context.close()
    }
  })
}
