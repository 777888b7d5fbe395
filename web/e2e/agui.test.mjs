// An AG-UI agent (backend/agui/testdata/agent.mjs, built on the protocol's own @ag-ui/core and
// @ag-ui/encoder) behind Parley, as people use it in the browser: a streamed Markdown answer,
// an interrupt answered, declined, and answered after Parley is killed and restarted, a
// request_user_input round trip, an error with Retry, a new message that cancels open
// interrupts, and several people answering at once.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startParley, launch, tempDB, root, results, pageErrors, axe, startConversation } from './harness.mjs'

let browser, agentProc, agentURL
before(async () => {
  browser = await launch()
  agentProc = spawn('node', [join(root, 'backend', 'agui', 'testdata', 'agent.mjs'), '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  agentURL = await new Promise((resolve, reject) => {
    agentProc.stdout.once('data', (b) => resolve(JSON.parse(b.toString().split('\n')[0]).url))
    agentProc.once('exit', (code) => reject(new Error(`the AG-UI test agent exited with ${code}`)))
  })
})
after(async () => {
  await browser?.close()
  agentProc?.kill()
})

// startWithAgent starts Parley with the AG-UI agent "Research assistant"; each person is
// named by the Remote-User header of a trusted proxy (this machine).
function startWithAgent (db = tempDB()) {
  const config = join(mkdtempSync(join(tmpdir(), 'parley-agui-')), 'agents.toml')
  writeFileSync(config, `
[[agents]]
name = "research"
title = "Research assistant"
backend = "agui"
url = "${agentURL}"
`)
  return startParley({ db, auth: 'proxy', env: { PARLEY_CONFIG: config, PARLEY_TRUSTED_PROXIES: '127.0.0.1' } })
}

async function as (name, viewport = { width: 1100, height: 900 }) {
  const context = await browser.newContext({ viewport, extraHTTPHeaders: { 'Remote-User': name } })
  const page = await context.newPage()
  return { context, page, errors: pageErrors(page) }
}

const lastReply = (page) => page.locator('.msg.agent').last()
const toolCard = (page) => page.locator('.tool-call', { hasText: 'deploy' })
const question = (page) => page.locator('section.question.pending')

test('a streamed Markdown answer, then an interrupt on a tool call answered in the form', async () => {
  const parley = await startWithAgent()
  const { context, page, errors } = await as('ann', { width: 390, height: 844 })
  try {
    await startConversation(page, parley.url, /Research assistant/, 'markdown please')
    await page.locator('.msg.agent h1', { hasText: 'Findings' }).waitFor()
    await page.locator('.msg.agent pre code').waitFor()
    await page.locator('#state .state-done').waitFor()

    await page.getByLabel('Message', { exact: true }).fill('deploy the site')
    await page.getByRole('button', { name: 'Send' }).click()
    const q = question(page)
    await q.getByText('Deploy to production?').waitFor()
    await q.getByText('A message instead cancels this question', { exact: false }).waitFor()
    await toolCard(page).locator('.tool-status-waiting').waitFor()
    await axe(page, 'an AG-UI interrupt at 390 px')
    await page.emulateMedia({ colorScheme: 'dark' })
    await axe(page, 'an AG-UI interrupt at 390 px, dark')
    await page.emulateMedia({ colorScheme: 'light' })
    await page.screenshot({ path: join(results, 'agui-interrupt.png'), fullPage: true })

    // The server checks the answer first: the required approval left empty comes back.
    await q.getByLabel(/^Note/).fill('ship it')
    await q.getByRole('button', { name: 'Submit' }).click()
    await q.locator('.field-error').first().waitFor()
    assert.equal(await q.getByLabel(/^Note/).inputValue(), 'ship it', 'the typed value is kept')
    await q.getByLabel(/^Approve the deploy/).selectOption('true')
    // Approve with edits: the call's arguments come prefilled, and are checked on the server.
    const edits = q.getByLabel(/^Edited arguments/)
    assert.match(await edits.inputValue(), /"env": "production"/)
    await edits.fill('{"env": "the moon"}')
    await q.getByRole('button', { name: 'Submit' }).click()
    await q.locator('.field-error', { hasText: 'Does not fit' }).waitFor()
    await q.getByLabel(/^Edited arguments/).fill('{"env": "staging"}')
    await q.getByRole('button', { name: 'Submit' }).click()
    await lastReply(page).getByText('{"approved":true,"editedArgs":{"env":"staging"},"note":"ship it"}', { exact: false }).waitFor()
    await toolCard(page).locator('.tool-status-done').waitFor()
    assert.match(await toolCard(page).textContent(), /Deployed to staging\./)
    await page.locator('#state .state-done').waitFor()
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('an interrupt declined, a request_user_input round trip, and an error with Retry', async () => {
  const parley = await startWithAgent()
  const { context, page, errors } = await as('bob')
  try {
    await startConversation(page, parley.url, /Research assistant/, 'deploy')
    const q = question(page)
    await q.getByText('Deploy to production?').waitFor()
    await q.locator('summary', { hasText: 'Decline' }).click()
    await q.getByLabel('Reason (optional)').fill('not on a Friday')
    await q.getByRole('button', { name: 'Decline' }).click()
    await lastReply(page).getByText('not on a Friday', { exact: false }).waitFor()
    await toolCard(page).locator('.tool-status-done').waitFor()
    assert.match(await toolCard(page).textContent(), /Not run\./)

    await page.getByLabel('Message', { exact: true }).fill('pick a venue')
    await page.getByRole('button', { name: 'Send' }).click()
    await question(page).getByText('Which venue?').waitFor()
    await question(page).getByLabel(/^Your choice/).selectOption('Harbor Hall')
    await question(page).getByRole('button', { name: 'Submit' }).click()
    await lastReply(page).getByText('"choice":"Harbor Hall"', { exact: false }).waitFor()

    await page.getByLabel('Message', { exact: true }).fill('flaky one')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('#run-status').getByText('The model provider is overloaded; try again. (overloaded)', { exact: false }).waitFor()
    await page.locator('#run-status').getByRole('button', { name: 'Retry' }).click()
    await lastReply(page).getByText('You said: flaky one').waitFor()
    await page.locator('#state .state-done').waitFor()
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('an interrupt answered after Parley is killed and restarted, and a new message that cancels the next', async () => {
  const db = tempDB()
  let parley = await startWithAgent(db)
  const { context, page, errors } = await as('cy')
  try {
    await startConversation(page, parley.url, /Research assistant/, 'form')
    await question(page).getByText('quarterly filing').waitFor()
    const at = page.url()
    await parley.stop('SIGKILL')
    parley = await startWithAgent(db)
    await page.goto(at.replace(/^http:\/\/[\d.:]+/, parley.url))
    const q = question(page)
    await q.getByLabel(/^Quarter/).selectOption('Q2')
    await q.getByLabel(/^Year/).fill('2026')
    await q.getByLabel(/^Revenue/).fill('1500.5')
    await q.getByRole('button', { name: 'Submit' }).click()
    await lastReply(page).getByText('{"quarter":"Q2","revenue":1500.5,"year":2026}', { exact: false }).waitFor()

    // Two interrupts open; a new message cancels both, and the page says so.
    await page.getByLabel('Message', { exact: true }).fill('two')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('section.question.pending').nth(1).waitFor()
    await page.getByLabel('Message', { exact: true }).fill('never mind')
    await page.getByRole('button', { name: 'Send' }).click()
    await lastReply(page).getByText('You said: never mind').waitFor()
    assert.equal(await page.locator('section.question .outcome-superseded').count(), 2, 'both questions are set aside')
    const thread = await page.locator('#thread').innerText()
    assert.equal((thread.match(/Cancelled int-/g) ?? []).length, 2, 'the agent was told of both cancellations')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('a reply streams on across a reload, exactly, and Stop aborts the run and keeps its text', async () => {
  const parley = await startWithAgent()
  const { context, page, errors } = await as('jo')
  try {
    await startConversation(page, parley.url, /Research assistant/, 'slow please')
    const streaming = page.locator('.msg.agent.streaming')
    await streaming.getByText('tick 5', { exact: false }).waitFor()
    await page.reload()
    await page.locator('.msg.agent.streaming').getByText('tick 15', { exact: false }).waitFor()
    const abortedBefore = (await (await fetch(agentURL.replace(/\/agent$/, '/aborted'))).json()).aborted
    await page.getByRole('button', { name: 'Stop' }).click()
    await page.locator('#state .state-stopped').waitFor()
    for (let i = 0; i < 100 && (await (await fetch(agentURL.replace(/\/agent$/, '/aborted'))).json()).aborted === abortedBefore; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.equal((await (await fetch(agentURL.replace(/\/agent$/, '/aborted'))).json()).aborted, abortedBefore + 1, 'the request to the agent is given up')
    const kept = page.locator('.msg.agent', { has: page.locator('.badge', { hasText: 'stopped' }) })
    const ticks = (await kept.locator('.body').innerText()).match(/tick \d+/g).map((t) => Number(t.slice(5)))
    assert.ok(ticks.length >= 15, `the text so far is kept (${ticks.length} ticks)`)
    assert.deepEqual(ticks, ticks.map((_, i) => i), 'every piece exactly once, in order, across the reload')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('several people answer their interrupts at once, each getting their own answer back', async () => {
  const parley = await startWithAgent()
  const people = await Promise.all(['dee', 'eve', 'fay', 'gus', 'hal', 'ivy'].map((name) => as(name)))
  try {
    await Promise.all(people.map(async ({ page }, i) => {
      await startConversation(page, parley.url, /Research assistant/, 'form')
      const q = question(page)
      await q.getByLabel(/^Quarter/).selectOption('Q1')
      await q.getByLabel(/^Year/).fill(String(2030 + i))
      await q.getByLabel(/^Revenue/).fill(String(i))
      await q.getByRole('button', { name: 'Submit' }).click()
      await lastReply(page).getByText(`"year":${2030 + i}`, { exact: false }).waitFor()
    }))
    for (const { errors } of people) assert.deepEqual(errors, [])
  } finally {
    await Promise.all(people.map(({ context }) => context.close()))
    await parley.stop()
  }
})
