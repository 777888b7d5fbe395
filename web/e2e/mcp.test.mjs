// A model-backed agent with an MCP tool server (parley mcp-demo over stdio): the model calls
// a tool, the tool server asks the person twice through Parley's forms, and the tool's
// result reaches the model and the reply.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startParley, launch, tempDB, root, results, startConversation, pageErrors, axe } from './harness.mjs'
import { startModel } from './fake-openai.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// fakeModel calls the demo's deploy tool when the person writes, and answers with the
// tool's result once it comes back.
function fakeModel () {
  return startModel((body, send) => {
    const last = body.messages.at(-1)
    if (last.role === 'tool') {
      send({ role: 'assistant', content: `The tool says: ${last.content}` })
      send({}, 'stop')
    } else {
      send({ role: 'assistant', content: '' })
      send({ tool_calls: [{ index: 0, id: 'call_deploy', type: 'function', function: { name: 'demo__deploy', arguments: '{"service":' } }] })
      send({ tool_calls: [{ index: 0, function: { arguments: '"api"}' } }] })
      send({}, 'tool_calls')
    }
  })
}

// startToolHelper starts Parley with one agent, "Tool helper", on the fake model, whose
// tool server "demo" is told where it is by server (TOML lines).
function startToolHelper (model, server) {
  const config = join(mkdtempSync(join(tmpdir(), 'parley-mcp-')), 'agents.toml')
  writeFileSync(config, `
[[agents]]
name = "tools"
title = "Tool helper"
base_url = "${model.url}"
model = "fake-model"

  [[agents.mcp]]
  name = "demo"
  ${server}
`)
  return startParley({ db: tempDB(), env: { PARLEY_CONFIG: config } })
}

test('an MCP tool server asks through forms and its result reaches the model', async () => {
  const model = await fakeModel()
  const parley = await startToolHelper(model, `command = "${join(root, 'parley')}"\n  args = ["mcp-demo"]`)
  const context = await browser.newContext()
  const page = await context.newPage()
  const errors = pageErrors(page)
  try {
    // The server is started with Parley; its tools are there before the first message.
    for (let i = 0; i < 100 && !/tool server ready/.test(parley.log()); i++) await new Promise((r) => setTimeout(r, 100))
    await startConversation(page, parley.url, /Tool helper/, 'Deploy the api')

    const card = page.locator('#thread details.tool-call')
    await card.first().waitFor()
    const first = page.locator('#thread section.question.pending')
    await first.getByText('Where should api go?').waitFor()
    assert.match(await first.innerText(), /Tool server “demo”/)
    await axe(page, 'a tool server’s form (light)')
    await page.emulateMedia({ colorScheme: 'dark' })
    await axe(page, 'a tool server’s form (dark)')
    await first.getByLabel(/^Environment/).selectOption('production')
    await first.getByRole('button', { name: 'Submit' }).click()

    const second = page.locator('#thread section.question.pending')
    await second.getByText('Which version of api goes to production?').waitFor({ timeout: 15000 })
    await second.getByRole('button', { name: 'Submit' }).click()
    await second.getByText(/required/i).first().waitFor()
    await second.getByLabel(/^Version/).selectOption('1.4.2')
    await second.getByRole('button', { name: 'Submit' }).click()

    await page.locator('#thread .msg.agent').getByText('The tool says: Deployed api 1.4.2 to production.').waitFor({ timeout: 15000 })
    await page.locator('#state .state-done').waitFor()
    assert.match(await card.last().locator('summary').innerText(), /deploy[\s\S]*done/i)

    const tool = model.requests.at(-1).messages.at(-1)
    assert.equal(tool.role, 'tool')
    assert.equal(tool.tool_call_id, 'call_deploy')
    assert.equal(tool.content, 'Deployed api 1.4.2 to production.')
    assert.ok(model.requests[0].tools.some((t) => t.function.name === 'demo__deploy'))

    // After a reload the card and both answered questions are still there; on a phone the
    // open card fits the width.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.reload()
    await page.locator('#thread details.tool-call summary').last().click()
    await page.locator('#thread details.tool-call').getByText('Deployed api 1.4.2 to production.').waitFor()
    assert.equal(await page.locator('#thread section.question').count(), 2)
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px')
    await axe(page, 'an ended tool call, open (dark, phone)')
    await page.locator('#thread details.tool-call').last().scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(results, 'mcp-tool-card.png') })
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
    await model.close()
  }
})

// startDemo runs parley mcp-demo over HTTP with the older (stateful) revision, and resolves
// with its endpoint once it says where it is.
function startDemo () {
  const proc = spawn(join(root, 'parley'), ['mcp-demo', '--http', '127.0.0.1:0', '--stateful'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  return new Promise((resolve, reject) => {
    proc.stderr.on('data', (b) => {
      log += b.toString()
      const m = log.match(/at (http:\/\/[\d.:]+\/mcp)/)
      if (m) resolve({ url: m[1], stop: () => proc.kill() })
    })
    proc.once('exit', (code) => reject(new Error(`mcp-demo exited with ${code}: ${log}`)))
  })
}

test('a server of the older revision asks in the middle of the call; the answer reaches the open call', async () => {
  const model = await fakeModel()
  const demo = await startDemo()
  const parley = await startToolHelper(model, `url = "${demo.url}"`)
  const context = await browser.newContext()
  const page = await context.newPage()
  const errors = pageErrors(page)
  try {
    await startConversation(page, parley.url, /Tool helper/, 'Deploy the api')
    // The first question comes while the call is open: the card says it waits.
    const first = page.locator('#thread section.question.pending')
    await first.getByText('Where should api go?').waitFor()
    await page.locator('#thread details.tool-call .tool-status').getByText(/waiting/).waitFor()
    await first.getByLabel(/^Environment/).selectOption('staging')
    await first.getByRole('button', { name: 'Submit' }).click()
    // The SDK's server sends the next round as a round trip.
    const second = page.locator('#thread section.question.pending')
    await second.getByText('Which version of api goes to staging?').waitFor({ timeout: 15000 })
    await second.getByLabel(/^Version/).selectOption('1.4.1')
    await second.getByRole('button', { name: 'Submit' }).click()
    await page.locator('#thread .msg.agent').getByText('The tool says: Deployed api 1.4.1 to staging.').waitFor({ timeout: 15000 })
    await page.locator('#state .state-done').waitFor()
    assert.equal(model.requests.length, 2, 'the model is called once for the call and once for the reply')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
    demo.stop()
    await model.close()
  }
})
