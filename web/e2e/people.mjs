// People with accounts and tokens, and their agents over MCP, for the browser tests (Parley's
// MCP server, groups, accounts, the installable app).
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { root, pageErrors } from './harness.mjs'

export const password = 'a long and quite memorable passphrase'
const bin = join(root, 'parley')

// addPerson makes an account (staff with role 'staff') and a personal access token on the
// command line, as an administrator would, and returns the token.
export function addPerson (db, name, role = 'user') {
  execFileSync(bin, ['user', 'add', name, '--role', role, '--password-stdin', '--db', db], { input: password + '\n', stdio: ['pipe', 'ignore', 'pipe'] })
  return execFileSync(bin, ['token', 'add', 'terminal', '--user', name, '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim()
}

// signIn opens a browser context of its own for the person and signs them in.
export async function signIn (browser, url, name, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, ...options })
  const page = await context.newPage()
  const errors = pageErrors(page)
  await page.goto(url + '/login')
  await page.getByLabel('User name').fill(name)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(url + '/')
  return { context, page, errors }
}

// signUp makes the person's own account on the page that Parley leads a newcomer to (the
// sign-up page, or sign-in and its "Make one" link), in the browser context given, and
// returns the page, signed in.
export async function signUp (context, url, name) {
  const page = await context.newPage()
  await page.goto(url + '/')
  await page.waitForURL(/\/(login|signup)/)
  if (page.url().includes('/login')) await page.getByRole('link', { name: 'Make one' }).click()
  await page.getByLabel('User name').fill(name)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByLabel('Password, again').fill(password)
  await page.getByRole('button', { name: 'Make the account' }).click()
  await page.waitForURL(url + '/')
  return page
}

// mcpAgent is a terminal's MCP client (the official SDK, calling itself Claude Code), with
// the person's token.
export async function mcpAgent (url, token) {
  const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '2.1.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url + '/mcp'), {
    requestInit: { headers: { Authorization: 'Bearer ' + token } }
  }))
  return client
}

// callTool calls a tool the way an agent that may wait long does: the request lives as long
// as progress keeps coming (and two minutes without), and the progress is kept.
export function callTool (client, name, args) {
  const progress = []
  const result = client.callTool({ name, arguments: args }, undefined, {
    timeout: 120_000,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: 600_000,
    onprogress: (p) => progress.push(p)
  })
  result.catch(() => {}) // a failing test closes the client under a waiting call
  return { result, progress }
}

// until retries check (which throws while not yet so) until it passes, for at most ms.
export async function until (check, what, ms = 30_000) {
  const end = Date.now() + ms
  for (;;) {
    try {
      return await check()
    } catch (e) {
      if (Date.now() > end) throw new Error(`${what}: ${e.message}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}
