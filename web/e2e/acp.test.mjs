// A coding agent (backend/acp/testdata/agent.mjs, built on the protocol's own
// @agentclientprotocol/sdk) behind Parley, as people use it in the browser: a permission
// request answered on its card (at 390 px, light and dark, under axe) and the file changed
// in the workspace, "always allow" remembered, Stop while a permission question waits,
// sanitized Markdown, and two people approving and rejecting at once.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startParley, launch, tempDB, root, results, pageErrors, axe, startConversation } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// startWithAgent starts Parley with the coding agent "Coding agent" working in a workspace
// of its own; each person is named by the Remote-User header of a trusted proxy.
async function startWithAgent (extra = '') {
  const dir = mkdtempSync(join(tmpdir(), 'parley-acp-'))
  const work = join(dir, 'work')
  mkdirSync(work)
  const config = join(dir, 'agents.toml')
  writeFileSync(config, `
[[agents]]
name = "coder"
title = "Coding agent"
backend = "acp"
command = "node"
args = [${JSON.stringify(join(root, 'backend', 'acp', 'testdata', 'agent.mjs'))}]
cwd = ${JSON.stringify(work)}
access = ["everyone"]   # a coding agent is staff's until its access is set
${extra}
`)
  const parley = await startParley({ db: tempDB(), auth: 'proxy', env: { PARLEY_CONFIG: config, PARLEY_TRUSTED_PROXIES: '127.0.0.1' } })
  return { parley, work }
}

async function as (name, viewport = { width: 1100, height: 900 }) {
  const context = await browser.newContext({ viewport, extraHTTPHeaders: { 'Remote-User': name } })
  const page = await context.newPage()
  return { context, page, errors: pageErrors(page) }
}

const lastReply = (page) => page.locator('.msg.agent').last()
const pending = (page) => page.locator('section.question.pending')
const card = (page, title) => page.locator('details.tool-call', { hasText: title })

async function send (page, text) {
  await page.getByLabel('Message', { exact: true }).fill(text)
  await page.getByRole('button', { name: 'Send' }).click()
}

test('a permission request on its card at 390 px: the diff, one button per option, and Allow changes the file', async () => {
  const { parley, work } = await startWithAgent()
  writeFileSync(join(work, 'notes.txt'), 'first line\n')
  const { context, page, errors } = await as('ann', { width: 390, height: 844 })
  try {
    await startConversation(page, parley.url, /Coding agent/, 'Please edit the notes')
    const q = pending(page)
    await q.getByText('Coding agent asks for your permission').waitFor()
    await q.getByText('Edit notes.txt').waitFor()
    // The change is shown as a highlighted diff; each option is a button, its kind said.
    await q.locator('pre code.language-diff', { hasText: '+hello from the agent' }).waitFor()
    assert.ok(await q.locator('pre code.language-diff span').count() > 0, 'the diff is highlighted')
    for (const [name, hint] of [['Allow', 'Allow once'], ['Always allow edits', 'Allow always'], ['Reject', 'Reject once'], ['Never allow edits', 'Reject always']]) {
      const b = q.getByRole('button', { name: new RegExp('^' + name) })
      await b.waitFor()
      assert.match(await b.textContent(), new RegExp(hint))
    }
    assert.equal(await q.getByRole('button', { name: 'Submit' }).count(), 0, 'no Submit beside the choices')
    await card(page, 'Edit notes.txt').locator('.tool-status-waiting').waitFor()
    await card(page, 'Edit notes.txt').locator('.tool-kind', { hasText: 'edit' }).waitFor()
    // The agent waits for the person, and the status line says so (not "working").
    await page.locator('#run-status').getByText('The agent is waiting for your answer.').waitFor()
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(width <= 390, `the page is ${width} px wide at 390`)
    await axe(page, 'a permission request at 390 px')
    await page.emulateMedia({ colorScheme: 'dark' })
    await axe(page, 'a permission request at 390 px, dark')
    await page.emulateMedia({ colorScheme: 'light' })
    await page.screenshot({ path: join(results, 'acp-permission.png'), fullPage: true })

    // A reload loses nothing: the question is still there, answerable, by keyboard too.
    await page.reload()
    await page.locator('#run-status').getByText('The agent is waiting for your answer.').waitFor()
    const allow = pending(page).getByRole('button', { name: /^Allow/ }).first()
    await allow.focus()
    await page.keyboard.press('Enter')
    await lastReply(page).getByText('I changed notes.txt.').waitFor()
    await page.locator('#state .state-done').waitFor()
    assert.equal(readFileSync(join(work, 'notes.txt'), 'utf8'), 'first line\nhello from the agent\n')
    const done = card(page, 'Edit notes.txt')
    await done.locator('.tool-status-done').waitFor()
    await done.locator('summary').click()
    await done.locator('.tool-diff pre code', { hasText: '+hello from the agent' }).waitFor()
    await done.getByText('Parley wrote notes.txt for the agent').waitFor()
    await page.locator('section.question .answers dd', { hasText: 'Allow' }).waitFor()

    // "Always allow" is remembered for the session: the second edit is not asked.
    await send(page, 'edit twice')
    await pending(page).getByRole('button', { name: /^Always allow edits/ }).click()
    await lastReply(page).getByText('todo.txt: changed').waitFor()
    assert.equal(await page.locator('section.question').count(), 2, 'asked once for two edits')
    const second = card(page, 'Edit todo.txt')
    await second.locator('summary').click()
    await second.getByText('Allowed without asking: “Always allow edits” was chosen earlier in this session.').waitFor()
    assert.equal(readFileSync(join(work, 'todo.txt'), 'utf8'), 'hello from the agent\n')
    await axe(page, 'a coding agent conversation')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('Stop while a permission question waits cancels it; Markdown is sanitized', async () => {
  const { parley, work } = await startWithAgent()
  const { context, page, errors } = await as('bob')
  try {
    await startConversation(page, parley.url, /Coding agent/, 'edit')
    await pending(page).getByRole('button', { name: /^Allow/ }).first().waitFor()
    await page.getByRole('button', { name: 'Stop' }).click()
    await page.locator('#state .state-stopped').waitFor()
    await page.locator('section.question .outcome-expired').waitFor()
    await page.locator('section.question').getByText('The run was stopped.').waitFor()
    assert.equal(await pending(page).count(), 0, 'nothing is left answerable')
    assert.ok(!existsSync(join(work, 'notes.txt')), 'the file was not written')

    // A new message while a permission question waits: the request is cancelled, and the
    // agent turns to the message in the same session.
    await send(page, 'edit')
    await pending(page).getByRole('button', { name: /^Allow/ }).first().waitFor()
    await send(page, 'hello there')
    await lastReply(page).getByText('Hello from the test agent.').waitFor()
    assert.equal(await pending(page).count(), 0, 'the request set aside is not answerable')
    assert.equal(await page.locator('section.question .outcome-expired').count(), 2)
    assert.ok(!existsSync(join(work, 'notes.txt')), 'the file was not written')

    await send(page, 'markdown please')
    await lastReply(page).locator('h1', { hasText: 'Result' }).waitFor()
    await page.locator('#state .state-done').waitFor()
    const executable = await page.locator('.msg.agent .body.md').last().evaluate((el) => [...el.querySelectorAll('*')]
      .flatMap((n) => [...n.attributes].map((a) => a.name)).filter((a) => a.startsWith('on') || a.startsWith('data-')))
    assert.deepEqual(executable, [], 'no handler or data-* attribute came through')
    assert.equal(await lastReply(page).locator('img').count(), 0, 'no image from the agent\'s HTML')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})

test('two people answer their own permission requests at once', async () => {
  const { parley, work } = await startWithAgent()
  const ann = await as('ann')
  const bob = await as('bob')
  try {
    await Promise.all([
      startConversation(ann.page, parley.url, /Coding agent/, 'edit'),
      startConversation(bob.page, parley.url, /Coding agent/, 'edit')
    ])
    await Promise.all([
      pending(ann.page).getByRole('button', { name: /^Allow/ }).first().waitFor(),
      pending(bob.page).getByRole('button', { name: /^Reject/ }).first().waitFor()
    ])
    await Promise.all([
      pending(ann.page).getByRole('button', { name: /^Allow/ }).first().click(),
      pending(bob.page).getByRole('button', { name: /^Reject/ }).first().click()
    ])
    await lastReply(ann.page).getByText('I changed notes.txt.').waitFor()
    await lastReply(bob.page).getByText('I left notes.txt alone.').waitFor()
    await card(bob.page, 'Edit notes.txt').locator('.tool-status-rejected').waitFor()
    assert.equal(readFileSync(join(work, 'notes.txt'), 'utf8'), 'hello from the agent\n', 'one edit, the one allowed')
    assert.deepEqual([...ann.errors, ...bob.errors], [])
  } finally {
    await ann.context.close()
    await bob.context.close()
    await parley.stop()
  }
})

test('a permission request not answered by its deadline expires, and the agent is told', async () => {
  const { parley, work } = await startWithAgent('ask_timeout = "2s"')
  const { context, page, errors } = await as('cy')
  try {
    await startConversation(page, parley.url, /Coding agent/, 'edit')
    await pending(page).locator('.deadline').waitFor()
    await page.locator('section.question .outcome-expired').waitFor({ timeout: 15000 })
    await page.locator('section.question').getByText('No answer came before the deadline.').waitFor()
    await page.locator('#run-status').getByRole('button', { name: 'Retry' }).waitFor()
    assert.ok(!existsSync(join(work, 'notes.txt')), 'the file was not written')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
  }
})
