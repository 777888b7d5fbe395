// Parley for an organization, end to end in Chromium: people sign in through the
// organization's OpenID Connect provider (a real one: web/oidctest, zitadel's provider
// package, run as its own process with its own login page), an agent only the group ops
// may use is absent for the others, and an agent's approval gate (the MCP reference
// server's echo tool behind approve_tools) goes to two of the group ops instead of the
// person who asked for it.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startParley, launch, tempDB, root, results, pageErrors, axe, startConversation } from './harness.mjs'
import { startFakeOpenAI, startModel } from './fake-openai.mjs'
import { until } from './people.mjs'

let browser
const tmp = mkdtempSync(join(tmpdir(), 'parley-org-'))
const providerBin = join(tmp, 'oidc-provider')
before(async () => {
  // The provider is a Go program of the test's (web/oidctest/oidcprovider).
  execFileSync('go', ['build', '-o', providerBin, './web/oidctest/oidcprovider'], { cwd: root, stdio: 'inherit' })
  browser = await launch()
})
after(async () => { await browser?.close() })

const phone = { width: 390, height: 844 }
const desk = { width: 1280, height: 800 }

// freePort is a port nobody listens on now.
function freePort () {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}

// startProvider runs the provider on port with its people and Parley's client.
function startProvider (port, parleyURL) {
  const config = join(tmp, `provider-${port}.json`)
  writeFileSync(config, JSON.stringify({
    users: [
      { username: 'olga', password: 'olga-pw', name: 'Olga Ops', email: 'olga@example.test', groups: ['/ops'] },
      { username: 'dan', password: 'dan-pw', name: 'Dan Dev', email: 'dan@example.test', groups: ['/dev'] }
    ],
    clients: [{
      id: 'parley',
      secret: 'parley-secret',
      redirect_uris: [parleyURL + '/auth/oidc/callback'],
      post_logout_redirect_uris: [parleyURL + '/login?signed_out=1']
    }]
  }))
  const proc = spawn(providerBin, ['-addr', `127.0.0.1:${port}`, '-config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  proc.stderr.on('data', (b) => { log += b })
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (b) => { if (/issuer=/.test(b.toString())) resolve({ proc, log: () => log, stop: () => proc.kill('SIGTERM') }) })
    proc.once('exit', (code) => reject(new Error(`the provider exited with ${code}: ${log}`)))
  })
}

function agentsFile (body) {
  const path = join(mkdtempSync(join(tmpdir(), 'parley-org-agents-')), 'agents.toml')
  writeFileSync(path, body)
  return path
}

// signInWithProvider goes from Parley's sign-in page through the provider's login page.
async function signInWithProvider (page, url, user, password) {
  await page.goto(url + '/')
  await page.waitForURL(/\/login\?next=/)
  await axe(page, 'the sign-in page')
  await page.getByRole('link', { name: 'Sign in with 127.0.0.1' }).click()
  await page.getByLabel('Username').fill(user)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(url + '/')
}

test('people sign in through the provider; the ops agent is theirs alone, at a desk and on a phone', async () => {
  const model = await startFakeOpenAI({ reply: 'Rolling out build 1432 now.', pace: 5 })
  const config = agentsFile(`
[[agents]]
name = "deploy"
title = "Deploy"
description = "Rolls out builds to production."
base_url = "${model.url}"
model = "fake-model"
access = ["group:ops"]
`)
  const idpPort = await freePort()
  // Parley starts before its provider is there: it says so, and keeps trying.
  const parley = await startParley({
    db: tempDB(),
    auth: 'oidc',
    env: { PARLEY_CONFIG: config, PARLEY_OIDC_ISSUER: `http://127.0.0.1:${idpPort}`, PARLEY_OIDC_CLIENT_ID: 'parley', PARLEY_OIDC_CLIENT_SECRET: 'parley-secret' }
  })
  const olga = await browser.newContext({ viewport: desk })
  const dan = await browser.newContext({ viewport: phone, colorScheme: 'dark' })
  let provider
  try {
    const early = await olga.newPage()
    await early.goto(parley.url + '/auth/oidc/login')
    await early.getByText('Parley cannot reach 127.0.0.1').waitFor()
    await early.close()
    provider = await startProvider(idpPort, parley.url)

    // Olga, in ops, at her desk: the provider's login page, then the picker with Deploy.
    const page = await olga.newPage()
    const errors = pageErrors(page)
    await until(async () => {
      const r = await page.request.get(parley.url + '/auth/oidc/login', { maxRedirects: 0 })
      assert.equal(r.status(), 303)
    }, 'Parley reads the provider’s discovery document')
    await signInWithProvider(page, parley.url, 'olga', 'olga-pw')
    await page.getByRole('radio', { name: /Deploy/ }).waitFor()
    await axe(page, 'the home page of a member of ops')
    await page.screenshot({ path: join(results, 'org-olga-home.png') })
    await startConversation(page, parley.url, /Deploy/, 'Roll out build 1432')
    await page.locator('#thread .msg.agent').getByText('Rolling out build 1432 now.').waitFor()
    const conv = new URL(page.url()).pathname

    // Dan, in dev, on his phone: no Deploy, and no way to it.
    const phonePage = await dan.newPage()
    const danErrors = pageErrors(phonePage)
    await signInWithProvider(phonePage, parley.url, 'dan', 'dan-pw')
    await phonePage.getByRole('radio', { name: /Event planner/ }).waitFor()
    assert.equal(await phonePage.getByRole('radio', { name: /Deploy/ }).count(), 0, 'Dan sees Deploy')
    assert.ok(await phonePage.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px')
    await axe(phonePage, 'the home page of a person outside ops, dark, at 390 px')
    await phonePage.screenshot({ path: join(results, 'org-dan-phone.png') })
    const start = await phonePage.request.post(parley.url + '/conversations', { form: { agent: 'deploy', text: 'Roll out my build' }, maxRedirects: 0 })
    assert.equal(start.status(), 404)
    const agents = await phonePage.request.get(parley.url + '/c/1')
    assert.equal(agents.status(), 404, 'Dan reads Olga’s conversation')
    assert.equal((await phonePage.goto(parley.url + conv)).status(), 404)

    // Signing out goes through the provider, and back to Parley's sign-in page.
    await phonePage.goto(parley.url + '/settings')
    await phonePage.locator('.account-menu > summary').click() // the account menu holds Sign out
    await phonePage.getByRole('button', { name: 'Sign out' }).click()
    await phonePage.waitForURL(parley.url + '/login?signed_out=1')
    await phonePage.getByText('You are signed out.').waitFor()
    await phonePage.goto(parley.url + '/')
    await phonePage.waitForURL(/\/login\?next=/)
    assert.deepEqual(errors, [])
    assert.deepEqual(danErrors, [])
    assert.match(parley.log(), /identity provider ready/)
  } finally {
    await olga.close()
    await dan.close()
    provider?.stop()
    await parley.stop()
    await model.close()
  }
})

const everything = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')

// deployModel calls the reference server's echo tool with the build to deploy, and says
// what the tool said once it ran (or that it did not).
function deployModel () {
  return startModel((body, send) => {
    const last = body.messages.at(-1)
    if (last.role === 'tool') {
      send({ role: 'assistant', content: `The tool says: ${last.content}` })
    } else {
      const build = /build (\d+)/.exec(last.content)?.[1] ?? '0'
      send({ role: 'assistant', content: '', tool_calls: [{ index: 0, id: 'call_' + build, type: 'function', function: { name: 'ref__echo', arguments: JSON.stringify({ message: `deploy build ${build}` }) } }] })
      send({}, 'tool_calls')
      return
    }
    send({}, 'stop')
  })
}

test('an approval gate goes to two of ops, not to the person who asked; the MCP reference server’s tool runs once they approved', async () => {
  const model = await deployModel()
  const config = agentsFile(`
[[agents]]
name = "deploy"
title = "Deploy"
base_url = "${model.url}"
model = "fake-model"
access = ["group:ops", "person:ann"]
approvers = "group:ops"
approvals = 2

  [[agents.mcp]]
  name = "ref"
  command = "node"
  args = ["${everything}", "stdio"]
  approve_tools = ["echo"]
`)
  // A sign-in proxy names each person, and their groups (Authelia's Remote-Groups).
  const parley = await startParley({
    db: tempDB(),
    auth: 'proxy',
    env: { PARLEY_CONFIG: config, PARLEY_TRUSTED_PROXIES: '127.0.0.1', PARLEY_PROXY_GROUPS_HEADER: 'Remote-Groups' }
  })
  const people = {}
  const as = async (name, groups, viewport = desk) => {
    const context = await browser.newContext({ viewport, extraHTTPHeaders: { 'Remote-User': name, 'Remote-Groups': groups } })
    const page = await context.newPage()
    people[name] = { context, page, errors: pageErrors(page) }
    await page.goto(parley.url + '/')
    return page
  }
  try {
    for (let i = 0; i < 200 && !/tool server ready/.test(parley.log()); i++) await new Promise((r) => setTimeout(r, 50))
    // Sam, the first to come, is staff. Ann is in dev and may use Deploy by name; bob, cy and
    // dee are ops, dee on her phone.
    await as('sam', '')
    const ann = await as('ann', 'dev')
    const bob = await as('bob', 'ops,dev')
    const cy = await as('cy', 'ops')
    const dee = await as('dee', 'ops', phone)
    await startConversation(ann, parley.url, /Deploy/, 'Deploy build 1432 to production')
    const card = ann.locator('#thread section.question')
    await card.getByText('This approval was asked on your behalf: it waits for the group ops to approve. You do not approve it yourself.').waitFor({ timeout: 60000 })
    assert.equal(await card.getByRole('button', { name: 'Approve and run' }).count(), 0, 'ann is offered her own approval')
    const id = (await card.getAttribute('id')).slice(2)
    await ann.locator('#sidebar').getByText('waiting on others').waitFor()

    // Bob finds it in his Inbox, reads the conversation that led to it, and approves.
    await bob.goto(parley.url + '/inbox')
    await bob.getByRole('link', { name: /Run the tool echo of the tool server ref/ }).click()
    await bob.waitForURL(parley.url + `/questions/${id}`)
    await bob.getByText('Deploy build 1432 to production').waitFor()
    assert.equal(await bob.locator('input[name="message"]').inputValue(), 'deploy build 1432')
    await axe(bob, 'an approval routed to ops, with its conversation')
    await bob.screenshot({ path: join(results, 'org-approval-bob.png'), fullPage: true })
    await bob.getByRole('button', { name: 'Approve and run' }).click()
    await bob.getByText('You approved. Waiting for 1 more of the group ops to approve').waitFor()

    // Ann's page says who approved so far; nothing ran yet.
    await ann.locator('#thread section.question').getByText('Approved so far: bob (1 of 2)').waitFor()
    assert.equal(await ann.locator('#thread .msg.agent').getByText(/The tool says/).count(), 0)

    // Dee approves on her phone: the tool runs, once, and ann reads what it said.
    await dee.goto(parley.url + `/questions/${id}`)
    assert.ok(await dee.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px')
    await dee.emulateMedia({ colorScheme: 'dark' })
    await axe(dee, 'an approval on a phone, dark')
    await dee.screenshot({ path: join(results, 'org-approval-dee.png'), fullPage: true })
    await dee.getByRole('button', { name: 'Approve and run' }).click()
    await ann.locator('#thread .msg.agent').getByText('The tool says: Echo: deploy build 1432').waitFor({ timeout: 60000 })
    await ann.locator('#state .state-done').waitFor()
    await ann.locator('#thread section.question').getByText(/Answered by bob, dee/).waitFor()
    await ann.screenshot({ path: join(results, 'org-approval-ann.png'), fullPage: true })
    const toolTurns = model.requests.filter((r) => r.messages.at(-1).role === 'tool')
    assert.equal(toolTurns.length, 1, 'the tool ran once')

    // Cy comes late: the question is answered, and says so.
    await cy.goto(parley.url + `/questions/${id}`)
    await cy.getByText(/Answered by bob, dee/).waitFor()
    for (const [name, p] of Object.entries(people)) assert.deepEqual(p.errors, [], name)
  } finally {
    for (const p of Object.values(people)) await p.context.close()
    await parley.stop()
    await model.close()
  }
})
