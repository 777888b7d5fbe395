// The MCP project's reference server (@modelcontextprotocol/server-everything, pinned in
// package.json, over stdio) behind a model-backed agent, as many people use it at once. It
// speaks MCP 2025-11-25: its tools ask in the middle of the call with requests that do not
// say which call they are for, so each call gets a session (a server process) of its own.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startParley, launch, tempDB, root, results, pageErrors, axe, startConversation } from './harness.mjs'
import { startModel } from './fake-openai.mjs'

const everything = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// refModel calls the reference server's URL tool when the person asks to sign in, else its
// form tool; once the result comes back it says the line of it that names the person.
function refModel () {
  return startModel((body, send) => {
    const last = body.messages.at(-1)
    if (last.role === 'tool') {
      const line = last.content.split('\n').find((l) => l.includes('Name:')) ?? last.content.split('\n')[0]
      send({ role: 'assistant', content: `The tool says: ${line}` })
      send({}, 'stop')
    } else {
      const call = /sign in/i.test(last.content)
        ? { name: 'ref__trigger-url-elicitation', arguments: '{"url":"https://example.com/sign-in","message":"Sign in to the example"}' }
        : { name: 'ref__trigger-elicitation-request', arguments: '{}' }
      send({ role: 'assistant', content: '', tool_calls: [{ index: 0, id: 'call_ref', type: 'function', function: call }] })
      send({}, 'tool_calls')
    }
  })
}

// startRef starts Parley with the agent "Reference tools"; each person is named by the
// Remote-User header of a trusted proxy (this machine).
function startRef (model, db = tempDB()) {
  const config = join(mkdtempSync(join(tmpdir(), 'parley-ref-')), 'agents.toml')
  writeFileSync(config, `
[[agents]]
name = "ref-tools"
title = "Reference tools"
base_url = "${model.url}"
model = "fake-model"

  [[agents.mcp]]
  name = "ref"
  command = "node"
  args = ["${everything}", "stdio"]
`)
  return startParley({ db, auth: 'proxy', env: { PARLEY_CONFIG: config, PARLEY_TRUSTED_PROXIES: '127.0.0.1' } })
}

async function ready (parley) {
  for (let i = 0; i < 200 && !/tool server ready/.test(parley.log()); i++) await new Promise((r) => setTimeout(r, 50))
}

// as opens a page as the named person.
async function as (name, viewport = { width: 1100, height: 900 }) {
  const context = await browser.newContext({ viewport, extraHTTPHeaders: { 'Remote-User': name } })
  const page = await context.newPage()
  return { context, page, errors: pageErrors(page) }
}

const pending = (page) => page.locator('#thread section.question.pending')

// answer fills in the reference server's form with the person's name and submits it.
async function answer (page, name) {
  const form = pending(page)
  await form.getByText('Please provide inputs for the following fields:').waitFor({ timeout: 60000 })
  await form.locator('input[name="name"]').fill(name)
  await form.getByRole('button', { name: 'Submit' }).click()
}

test('twenty people call the reference server at once: each is asked, and each answer reaches its own turn', async () => {
  const model = await refModel()
  const db = tempDB()
  const parley = await startRef(model, db)
  const people = []
  try {
    await ready(parley)
    for (let i = 1; i <= 20; i++) {
      const p = await as(`person-${i}`)
      people.push(p)
      await startConversation(p.page, parley.url, /Reference tools/, `Fill in the form for person ${i}`)
    }
    // Sixteen sessions (the default max_sessions) ask at once; the other calls wait for a
    // free one, and their cards say so.
    await Promise.all(people.map(async ({ page }) => {
      await page.locator('#thread details.tool-call .tool-status').getByText(/waiting for (the person’s answer|a free session)/).waitFor({ timeout: 60000 })
    }))
    const waitingForSession = (await Promise.all(people.map(({ page }) =>
      page.locator('#thread details.tool-call .tool-status').getByText(/a free session/).count()))).reduce((a, b) => a + b)
    assert.equal(waitingForSession, 4, 'four calls wait for a session')

    // The reference server's optional email field is left out, saying why; the rest is asked.
    const first = people[0].page
    await pending(first).getByText(/Parley did not show the field “email”: Parley does not collect email addresses/).waitFor()
    await axe(first, 'the reference server’s form (light)')
    await first.emulateMedia({ colorScheme: 'dark' })
    await axe(first, 'the reference server’s form (dark)')
    await first.screenshot({ path: join(results, 'mcp-everything-form.png'), fullPage: true })

    await Promise.all(people.map(({ page }, i) => answer(page, `Person ${i + 1}`)))
    await Promise.all(people.map(async ({ page }, i) => {
      await page.locator('#thread .msg.agent').getByText(`The tool says: - Name: Person ${i + 1}`, { exact: true }).waitFor({ timeout: 60000 })
      await page.locator('#state .state-done').waitFor()
    }))
    // Each tool result went to the model in the turn of the person who answered it.
    for (let i = 1; i <= 20; i++) {
      const turns = model.requests.filter((r) => r.messages.at(-1).role === 'tool' && r.messages.find((m) => m.role === 'user').content.endsWith(`person ${i}`))
      assert.equal(turns.length, 1, `person ${i}: one turn with the tool's result`)
      assert.match(turns[0].messages.at(-1).content, new RegExp(`- Name: Person ${i}\\n`))
    }
    for (const { errors } of people) assert.deepEqual(errors, [])
    assert.doesNotMatch(parley.log(), /could not tie|cancelled it/)
  } catch (err) {
    // What the server and each person's page show, for the test's report.
    writeFileSync(join(results, 'mcp-everything-twenty.log'), parley.log())
    for (const [i, { page }] of people.entries()) await page.screenshot({ path: join(results, `mcp-everything-person-${i + 1}.png`), fullPage: true }).catch(() => {})
    throw err
  } finally {
    for (const { context } of people) await context.close()
    await parley.stop()
    await model.close()
  }
})

test('a page to open is asked while another person’s form waits; SIGTERM with that form waiting, then Retry asks again', async () => {
  const model = await refModel()
  const db = tempDB()
  let parley = await startRef(model, db)
  const ann = await as('ann')
  const bob = await as('bob', { width: 390, height: 844 })
  try {
    await ready(parley)
    await startConversation(ann.page, parley.url, /Reference tools/, 'Fill in the form')
    await pending(ann.page).getByText('Please provide inputs for the following fields:').waitFor({ timeout: 60000 })

    // Bob is sent to a page while Ann's form waits.
    await startConversation(bob.page, parley.url, /Reference tools/, 'Please sign in')
    const link = pending(bob.page)
    await link.getByText('Sign in to the example').waitFor({ timeout: 60000 })
    assert.match(await link.innerText(), /https:\/\/example\.com\/sign-in/)
    assert.equal(await link.getByRole('link', { name: /Open the page/ }).getAttribute('href'), 'https://example.com/sign-in')
    assert.ok(await bob.page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px')
    await link.getByRole('button', { name: 'I have finished there' }).click()
    await bob.page.locator('#thread .msg.agent').getByText(/The tool says: ✅ User completed the URL elicitation flow/).waitFor({ timeout: 60000 })

    // SIGTERM while Ann's form waits: Parley ends within its grace of 10 s, cleanly.
    const stopped = Date.now()
    const code = await parley.stop('SIGTERM')
    const took = Date.now() - stopped
    assert.equal(code, 0, parley.log())
    assert.ok(took < 10000, `SIGTERM took ${took} ms`)

    parley = await startRef(model, db)
    await ready(parley)
    const path = new URL(ann.page.url()).pathname
    await ann.page.goto(parley.url + path)
    const expired = ann.page.locator('#thread section.question').first()
    await expired.getByText(/Parley stopped while the tool server waited for this answer/).waitFor()
    await ann.page.locator('#thread details.tool-call').first().getByText(/Cut off while it waited for the person’s answer: Parley stopped/).waitFor()
    await ann.page.locator('#run-status').getByText(/cut off/).waitFor()
    await axe(ann.page, 'a question expired by a stop, with Retry')
    await ann.page.screenshot({ path: join(results, 'mcp-everything-stopped.png'), fullPage: true })
    await ann.page.locator('#run-status').getByRole('button', { name: 'Retry' }).click()

    // The call runs again, and the server asks again.
    await answer(ann.page, 'Ann Example')
    await ann.page.locator('#thread .msg.agent').getByText('The tool says: - Name: Ann Example', { exact: true }).waitFor({ timeout: 60000 })
    await ann.page.locator('#state .state-done').waitFor()
    assert.deepEqual(ann.errors, [])
    assert.deepEqual(bob.errors, [])
  } finally {
    await ann.context.close()
    await bob.context.close()
    await parley.stop()
    await model.close()
  }
})
