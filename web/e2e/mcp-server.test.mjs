// Parley as an MCP server, end to end: an agent in a terminal (the official MCP TypeScript
// SDK, calling itself Claude Code) asks a person who is on their phone, and the answer
// comes back to it. Two people at once, each with a token of their own: ann answers on a
// phone by keyboard, bob declines at his desk in dark mode; then ann edits the arguments of
// a request_approval and approves it. The conversation an MCP client asks in has no
// message box.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, axe } from './harness.mjs'
import { addPerson, signIn as signInWith, mcpAgent as agent, callTool as call, until } from './people.mjs'

let browser
const signIn = (url, name, options) => signInWith(browser, url, name, options)
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

const phone = { width: 390, height: 844 }

// openFromInbox opens the Inbox and follows the question whose first line is text to its
// card; the question may still be on its way from the agent, so the Inbox is read again
// until it lists it.
async function openFromInbox (page, url, text) {
  const link = page.getByRole('link', { name: text, exact: true })
  await until(async () => {
    await page.goto(url + '/inbox')
    await link.waitFor({ timeout: 1000 })
  }, `the Inbox lists “${text}”`)
  const row = page.getByRole('row', { name: text })
  assert.match(await row.innerText(), /Questions from Claude Code[\s\S]*\tClaude Code\t/)
  await noSideways(page, 'the Inbox')
  await link.click()
  await page.waitForURL(/\/c\/\d+#q-\d+$/)
  const card = page.locator(new URL(page.url()).hash)
  await card.waitFor()
  return { card, url: page.url() }
}

// noSideways checks that the page is no wider than the screen: nothing to scroll sideways.
async function noSideways (page, what) {
  const { width } = page.viewportSize()
  const w = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(w <= width, `${what}: the page is ${w} px wide at ${width}`)
}

// The question ann's agent asks: a choice and a name.
const regionQuestion = {
  message: 'Which region should the new cluster run in?\n\nThe cluster serves the **checkout** service.',
  fields: [
    { name: 'region', label: 'Region', kind: 'select', required: true, options: [{ value: 'eu-west-1', label: 'Ireland (eu-west-1)' }, { value: 'us-east-1', label: 'Virginia (us-east-1)' }] },
    { name: 'cluster_name', label: 'Cluster name', kind: 'text', required: true, description: 'Lowercase letters and dashes.' }
  ],
  request_id: 'cluster-region-1'
}

test('an agent in a terminal asks people on their phone and at their desk, and the answers come back to it', async () => {
  const db = tempDB()
  const tokens = { ann: addPerson(db, 'ann'), bob: addPerson(db, 'bob') }
  for (const t of Object.values(tokens)) assert.match(t, /^parley_[\w-]{43}$/)
  const parley = await startParley({ db, auth: 'local' })
  const clients = []
  const contexts = []
  try {
    // Without a token, the server says how to authenticate.
    const refused = await fetch(parley.url + '/mcp', { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{}' })
    assert.equal(refused.status, 401)
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="parley"')

    // Each person's agent connects with their token, and finds the two tools, each with
    // the shape of its result.
    const annAgent = await agent(parley.url, tokens.ann)
    const bobAgent = await agent(parley.url, tokens.bob)
    clients.push(annAgent, bobAgent)
    assert.equal(annAgent.getServerVersion().name, 'parley')
    const { tools } = await annAgent.listTools()
    for (const name of ['ask_person', 'request_approval']) {
      const tool = tools.find((t) => t.name === name)
      assert.ok(tool, `the server offers ${name}`)
      assert.equal(tool.outputSchema?.type, 'object', `${name} has an output schema`)
      assert.ok(tool.outputSchema.properties.outcome, `${name}'s output schema has outcome`)
    }

    // Both agents ask at once, each their own person, and wait for the answer.
    const annAsk = call(annAgent, 'ask_person', { ...regionQuestion, wait: '10m' })
    const bobAsk = call(bobAgent, 'ask_person', {
      message: 'What should the release notes say about the schema change?',
      fields: [{ name: 'notes', label: 'Release notes', kind: 'textarea', required: true }],
      wait: '10m',
      request_id: 'release-notes-7'
    })

    // Ann is on her phone, bob at his desk in dark mode.
    const ann = await signIn(parley.url, 'ann', { viewport: phone, isMobile: true, hasTouch: true })
    const bob = await signIn(parley.url, 'bob', { colorScheme: 'dark' })
    contexts.push(ann.context, bob.context)

    // Ann finds the question in her Inbox and opens its card: what the agent asks, from
    // Claude Code, in her conversation with it, the page no wider than her phone.
    const { card: annCard, url: annURL } = await openFromInbox(ann.page, parley.url, 'Which region should the new cluster run in?')
    await annCard.locator('.q-head .who', { hasText: 'Claude Code' }).waitFor()
    await annCard.locator('.body strong', { hasText: 'checkout' }).waitFor()
    assert.equal(await ann.page.getByRole('heading', { level: 1 }).innerText(), 'Questions from Claude Code')
    assert.equal(await ann.page.locator('#waiting-count').getAttribute('data-waiting'), '1')
    await noSideways(ann.page, 'the question card on a phone')
    await axe(ann.page, 'an MCP question card at 390 px')
    await ann.page.emulateMedia({ colorScheme: 'dark' })
    await axe(ann.page, 'an MCP question card at 390 px, dark')
    await ann.page.emulateMedia({ colorScheme: 'light' })
    await ann.page.screenshot({ path: join(results, 'mcp-server-phone.png'), fullPage: true })

    // Bob's is in his own Inbox, and his sidebar says it waits for him.
    const { card: bobCard } = await openFromInbox(bob.page, parley.url, 'What should the release notes say about the schema change?')
    assert.ok(await bob.page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), 'bob\'s page is dark')
    const side = bob.page.locator('#sidebar').getByRole('link', { name: /Questions from Claude Code/ })
    assert.equal(await side.getAttribute('aria-current'), 'page')
    await side.getByText('waiting for you').waitFor()
    await axe(bob.page, 'an MCP question card, dark')

    // Ann answers by keyboard: the region with the arrow keys, Tab, the name, Enter.
    const region = annCard.getByLabel('Region')
    await region.focus()
    await ann.page.keyboard.press('ArrowDown')
    await ann.page.keyboard.press('ArrowDown')
    assert.equal(await region.inputValue(), 'us-east-1')
    await ann.page.keyboard.press('Tab')
    assert.ok(await annCard.getByLabel('Cluster name').evaluate((el) => el === document.activeElement), 'Tab goes on to the name')
    await ann.page.keyboard.type('checkout-prod')
    // Bob declines his, saying why; both at once.
    await bobCard.locator('details.decline summary').click()
    await bobCard.getByLabel('Reason (optional)').fill('The schema change is not merged yet.')
    await Promise.all([
      ann.page.keyboard.press('Enter'),
      bobCard.getByRole('button', { name: 'Decline', exact: true }).click()
    ])

    // Each agent gets its own person's answer back.
    const [annResult, bobResult] = await Promise.all([annAsk.result, bobAsk.result])
    assert.ok(!annResult.isError, JSON.stringify(annResult))
    const a = annResult.structuredContent
    assert.equal(a.outcome, 'answered')
    assert.deepEqual(a.values, { region: 'us-east-1', cluster_name: 'checkout-prod' })
    assert.equal(a.by, 'ann')
    assert.ok(Math.abs(Date.parse(a.at) - Date.now()) < 5 * 60_000, `at is a time of the test: ${a.at}`)
    assert.equal(a.url, annURL, 'the result links to the card ann answered on')
    assert.deepEqual(JSON.parse(annResult.content[0].text), a, 'the text content is the same JSON')
    assert.ok(!bobResult.isError, JSON.stringify(bobResult))
    const b = bobResult.structuredContent
    assert.equal(b.outcome, 'declined')
    assert.equal(b.reason, 'The schema change is not merged yet.')
    assert.equal(b.by, 'bob')
    assert.deepEqual(b.values, {})
    assert.notEqual(a.question_id, b.question_id)
    // Progress, if any came while they waited (every 25 s), says whom the call waits for.
    for (const p of annAsk.progress) assert.match(p.message, /^Waiting for ann to answer question \d+ in Parley\.$/)
    for (const p of bobAsk.progress) assert.match(p.message, /^Waiting for bob to answer question \d+ in Parley\.$/)

    // The cards say so, each on its own page, as they happen.
    await annCard.locator('.badge.outcome-answered').waitFor()
    await annCard.locator('.answers dd', { hasText: 'Virginia (us-east-1)' }).waitFor()
    await bobCard.locator('.badge.outcome-declined').waitFor()
    await bobCard.locator('.reason', { hasText: 'The schema change is not merged yet.' }).waitFor()

    // Called again with the same request_id (as after a dropped connection), the call
    // finds the same question, answered: not a second one.
    const again = await annAgent.callTool({ name: 'ask_person', arguments: { ...regionQuestion, wait: '0s' } })
    assert.equal(again.structuredContent.question_id, a.question_id)
    assert.equal(again.structuredContent.outcome, 'answered')
    assert.deepEqual(again.structuredContent.values, a.values)

    // A request for approval: ann deploys to staging rather than production, and approves.
    const approval = call(annAgent, 'request_approval', {
      action: 'Deploy build 1432 to production',
      details: 'It carries the **new checkout flow**. Rolling back takes five minutes.',
      arguments: { environment: 'production', build: 1432 },
      wait: '10m',
      request_id: 'deploy-1432'
    })
    const { card: approvalCard } = await openFromInbox(ann.page, parley.url, 'Approve: Deploy build 1432 to production')
    const environment = approvalCard.getByLabel('Environment')
    assert.equal(await environment.inputValue(), 'production')
    assert.equal(await approvalCard.getByLabel('Build').inputValue(), '1432')
    assert.equal(await approvalCard.getByRole('button', { name: 'Submit' }).count(), 0, 'Approve, not Submit')
    await approvalCard.getByText('Reject…').waitFor()
    await noSideways(ann.page, 'the approval on a phone')
    await axe(ann.page, 'an MCP approval at 390 px')
    await ann.page.emulateMedia({ colorScheme: 'dark' })
    await axe(ann.page, 'an MCP approval at 390 px, dark')
    await ann.page.emulateMedia({ colorScheme: 'light' })
    await environment.focus()
    await ann.page.keyboard.press('Control+a')
    await ann.page.keyboard.type('staging')
    await approvalCard.getByRole('button', { name: 'Approve' }).tap()
    const approvalResult = await approval.result
    assert.ok(!approvalResult.isError, JSON.stringify(approvalResult))
    const approved = approvalResult.structuredContent
    assert.equal(approved.outcome, 'approved')
    assert.equal(approved.approved, true)
    assert.deepEqual(approved.arguments, { environment: 'staging', build: 1432 })
    assert.equal(approved.by, 'ann')
    await approvalCard.locator('.badge.outcome-answered').waitFor()
    await approvalCard.locator('.answers dd', { hasText: 'staging' }).waitFor()

    // The conversation the agent asks in has no message box: a note says how it asks.
    for (const [p, what] of [[ann.page, 'at 390 px'], [bob.page, 'dark']]) {
      await p.reload()
      await p.getByRole('note').filter({ hasText: 'Claude Code asks you here through Parley’s MCP server' }).waitFor()
      assert.equal(await p.locator('#composer').count(), 0, 'no composer')
      assert.equal(await p.getByLabel('Message', { exact: true }).count(), 0, 'no message box')
      await axe(p, `an MCP conversation, ${what}`)
    }
    await noSideways(ann.page, 'the conversation on a phone')
    assert.deepEqual([...ann.errors, ...bob.errors], [])
  } finally {
    for (const c of clients) await c.close().catch(() => {})
    for (const c of contexts) await c.close()
    await parley.stop()
  }
})
