// Starts the built parley binary on a temp database and drives Debian's chromium.
import { spawn } from 'node:child_process'
import { mkdtempSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import AxeBuilder from '@axe-core/playwright'
import assert from 'node:assert/strict'

export const root = resolve(import.meta.dirname, '..', '..')
export const results = join(root, 'test-results')
mkdirSync(results, { recursive: true })

export function tempDB () {
  return join(mkdtempSync(join(tmpdir(), 'parley-e2e-')), 'parley.db')
}

// startParley runs ./parley and resolves once it logs its address. Tests about something
// else than accounts run it for one person without sign-in (auth 'none').
export function startParley ({ db, addr = '127.0.0.1:0', env = {}, auth = 'none' }) {
  const proc = spawn(join(root, 'parley'), ['serve', '--addr', addr, '--db', db, '--auth', auth], {
    env: { ...process.env, PARLEY_BUILTIN_PACE: '2ms', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let log = ''
  const collect = (b) => { log += b.toString() }
  proc.stdout.on('data', collect)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('parley did not start:\n' + log)), 15000)
    proc.stderr.on('data', (b) => {
      collect(b)
      const m = log.match(/listening on (http:\/\/[\d.:]+)/)
      if (m) {
        clearTimeout(timer)
        resolve({
          url: m[1],
          addr: m[1].replace('http://', ''),
          proc,
          log: () => log,
          stop: (signal = 'SIGTERM') => new Promise((resolve) => {
            if (proc.exitCode !== null) return resolve(proc.exitCode)
            proc.once('exit', (code, sig) => resolve(code ?? sig))
            proc.kill(signal)
          })
        })
      }
    })
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`parley exited with ${code}:\n${log}`)) })
  })
}

export async function launch () {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
}

// pageErrors collects the page's uncaught errors: a test ends by finding none.
export function pageErrors (page) {
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  return errors
}

// startConversation starts a conversation from the home page, with the agent whose choice
// matches agent, and waits for its page.
export async function startConversation (page, url, agent, text) {
  await page.goto(url + '/')
  await page.getByRole('radio', { name: agent }).check()
  await page.getByLabel('Message', { exact: true }).fill(text)
  await page.getByRole('button', { name: 'Send' }).click()
  await page.waitForURL(/\/c\/\d+$/)
}

// axe runs axe-core on the page and fails on any critical or serious violation.
export async function axe (page, what) {
  const r = await new AxeBuilder({ page }).analyze()
  const bad = r.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious')
  assert.deepEqual(bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`), [], `axe on ${what}`)
}
