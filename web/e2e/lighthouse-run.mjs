// One Lighthouse run, in a process of its own, for web/e2e/lighthouse.test.mjs: it starts
// Debian's chromium for this run alone, audits one page, writes what the test reads to a
// JSON file, and exits. Lighthouse can leave work behind once a run is over (a session it
// still calls on a tab it closed); in a process of its own that ends with the process, and
// never fails a later test.
//
//   node web/e2e/lighthouse-run.mjs URL mobile|desktop OUT.json   (PARLEY_COOKIE: the session,
//   as a Cookie header: "name=value; ...")
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import lighthouse from 'lighthouse'
import puppeteer from 'puppeteer-core'
import desktopConfig from 'lighthouse/core/config/desktop-config.js'
import { NetworkMonitor } from 'lighthouse/core/gather/driver/network-monitor.js'
import Trace from 'lighthouse/core/gather/gatherers/trace.js'

const categories = ['accessibility', 'best-practices', 'performance', 'seo']
const [url, formFactor, outFile] = process.argv.slice(2)

// Lighthouse waits for the page's network to go quiet before it audits: no request of high
// priority open for a while. It leaves out server-sent events read by an EventSource, which
// stay open, but not those read by fetch, as Datastar reads the pages' streams (/live, a
// conversation's /stream): every run would wait out its 45 s limit and warn that the page
// loaded too slowly. A response of type text/event-stream is left out the same way here
// (the check is Lighthouse 12.2.3's, with that one condition more).
NetworkMonitor.prototype.isCriticalIdle = function () {
  if (!this._networkRecorder) return false
  const requests = this._networkRecorder.getRawRecords()
  const rootFrameId = requests.find((r) => r.resourceType === 'Document')?.frameId
  return this._isIdlePeriod(0, (r) =>
    r.frameId === rootFrameId &&
    r.resourceType !== 'WebSocket' && r.resourceType !== 'EventSource' && r.mimeType !== 'text/event-stream' &&
    (r.priority === 'VeryHigh' || r.priority === 'High'))
}

// Chromium now names the frame reporter's trace arguments frame_reporter, not
// chrome_frame_reporter as the trace engine of Lighthouse 12.2.3 reads them: without both
// names, its screenshots handler throws, and with it every audit that needs the trace's
// elements (the largest paint, the layout shifts, render-blocking resources) errors.
const collectTrace = Trace.endTraceAndCollectEvents
Trace.endTraceAndCollectEvents = async function (session) {
  const trace = await collectTrace.call(this, session)
  for (const e of trace.traceEvents) {
    if (e.name === 'PipelineReporter' && e.args?.frame_reporter && !e.args.chrome_frame_reporter) e.args.chrome_frame_reporter = e.args.frame_reporter
  }
  return trace
}

// startChromium runs Debian's chromium for Lighthouse alone (Playwright, connected to a
// browser, would attach to the tabs Lighthouse opens too), headless, with its debugging port
// on loopback (chosen by chromium, read from its profile), and with no name but loopback's
// resolving.
async function startChromium () {
  const profile = mkdtempSync(join(tmpdir(), 'parley-lighthouse-'))
  const proc = spawn(process.env.CHROMIUM || '/usr/bin/chromium', [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--disable-default-apps', '--disable-extensions', '--mute-audio', '--no-default-browser-check',
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
    '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0',
    `--user-data-dir=${profile}`, 'about:blank'
  ], { stdio: 'ignore' })
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  const end = Date.now() + 20_000
  for (;;) {
    try {
      const port = Number(readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0])
      if (port) {
        return {
          port,
          stop: async () => {
            if (proc.exitCode === null) proc.kill()
            await exited
            // Chromium's helpers can still be writing its profile as it exits: its removal is
            // tried a while, and a profile left in the temporary folder fails nothing.
            try {
              rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
            } catch {}
          }
        }
      }
    } catch {}
    if (proc.exitCode !== null || Date.now() > end) throw new Error('chromium did not open its debugging port')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

// failing lists the audits that do not pass as Lighthouse's report shows them (a score below
// 0.9; 0 or 1 for a pass/fail one), with the categories that count them.
function failing (lhr) {
  const where = {}
  for (const [id, c] of Object.entries(lhr.categories)) {
    for (const ref of c.auditRefs) (where[ref.id] ??= []).push(id)
  }
  return Object.values(lhr.audits)
    .filter((a) => a.scoreDisplayMode === 'error' || (a.score !== null && a.score < 0.9 && ['binary', 'numeric', 'metricSavings'].includes(a.scoreDisplayMode)))
    .map((a) => ({ id: a.id, title: a.title, score: a.score, categories: where[a.id] ?? [], ...(a.errorMessage ? { error: a.errorMessage } : {}) }))
}

// Lighthouse can call on a tab it closed already (a stray "Session closed" rejection of its
// own, seen on a busy machine): that is no failure of the run, whose report still comes.
process.on('unhandledRejection', (e) => {
  if (/Session closed|Target closed/.test(String(e?.message ?? e))) return
  console.error(e)
  process.exit(1)
})

const chrome = await startChromium()
let r
try {
  // The session goes in the browser's cookies (kept: no storage reset), so that the page's
  // own requests (its streams, read by fetch) carry it as a browser's do.
  const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${chrome.port}` })
  const tab = await browser.newPage()
  await tab.setCookie(...(process.env.PARLEY_COOKIE || '').split('; ').filter(Boolean).map((kv) => {
    const i = kv.indexOf('=')
    return { name: kv.slice(0, i), value: kv.slice(i + 1), url: new URL(url).origin, httpOnly: true, sameSite: 'Lax' }
  }))
  await tab.close()
  await browser.disconnect()
  r = await lighthouse(url, {
    port: chrome.port,
    hostname: '127.0.0.1',
    output: 'json',
    logLevel: 'error',
    onlyCategories: categories,
    disableStorageReset: true
  }, formFactor === 'desktop' ? desktopConfig : undefined)
} finally {
  await chrome.stop()
}
const { lhr } = r
writeFileSync(outFile, JSON.stringify({
  scores: Object.fromEntries(categories.map((c) => [c, lhr.categories[c]?.score ?? null])),
  failing: failing(lhr),
  warnings: lhr.runWarnings,
  runtimeError: lhr.runtimeError,
  finalUrl: lhr.finalDisplayedUrl,
  requested: r.artifacts.DevtoolsLog.filter((e) => e.method === 'Network.requestWillBeSent').map((e) => e.params.request.url)
}))
process.exit(0) // what Lighthouse left running ends here
