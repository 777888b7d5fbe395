// Groups, end to end: a staff member sets up the group ops on her phone, by keyboard, with
// a webhook that hears of its questions; ann's agent (the official MCP SDK, as Claude
// Code) asks the group, the webhook is told with a link to the question's own page, both
// members find it in their Inbox, bob answers at his desk and the answer comes back to the
// agent; dee, on her phone in dark mode, sees it answered. Then a request_approval that
// needs two of them: bob approves, the webhook's first delivery fails and is retried, dee
// approves. ann adds channels of her own on Settings, one refused.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, axe } from './harness.mjs'
import { addPerson, signIn as signInWith, mcpAgent as agent, callTool as call, until } from './people.mjs'

let browser
const signIn = (url, name, options) => signInWith(browser, url, name, options)
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

const phone = { width: 390, height: 844 }

// noSideways checks that the page is no wider than the screen: nothing to scroll sideways.
async function noSideways (page, what) {
  const { width } = page.viewportSize()
  const w = await page.evaluate(() => document.scrollingElement.scrollWidth)
  assert.ok(w <= width, `${what}: the page is ${w} px wide at ${width}`)
}

// axeLightAndDark runs axe on the page as it is, then in dark mode, and goes back to light.
async function axeLightAndDark (page, what) {
  await axe(page, what)
  await page.emulateMedia({ colorScheme: 'dark' })
  await axe(page, what + ', dark')
  await page.emulateMedia({ colorScheme: 'light' })
}

// receiver is a webhook, as a chat service's incoming webhook would be: it keeps what it
// is posted, and answers 503 to the posts that fail() picks (once each).
function receiver () {
  const posts = []
  const failing = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (b) => { body += b })
    req.on('end', () => {
      const post = { method: req.method, type: req.headers['content-type'], agent: req.headers['user-agent'], body: JSON.parse(body || 'null') }
      const i = failing.findIndex((f) => f(post))
      post.status = i >= 0 ? 503 : 200
      if (i >= 0) failing.splice(i, 1)
      posts.push(post)
      res.writeHead(post.status, { 'Content-Type': 'text/plain' }).end(post.status === 200 ? 'ok' : 'busy, try later')
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/hooks/ops`,
    posts,
    failOnce: (f) => failing.push(f),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) })
  })))
}

// openFromInbox reads the Inbox until it lists the question whose first line is text,
// checks the row, and follows it to the question's own page.
async function openFromInbox (page, url, text, id) {
  const link = page.getByRole('link', { name: text, exact: true })
  await until(async () => {
    await page.goto(url + '/inbox')
    await link.waitFor({ timeout: 1000 })
  }, `the Inbox lists “${text}”`)
  assert.equal(await link.getAttribute('href'), `/questions/${id}`)
  const row = page.getByRole('row', { name: text })
  assert.match(await row.innerText(), /Claude Code · ann asks the group ops/)
  await noSideways(page, 'the Inbox')
  await link.click()
  await page.waitForURL(url + `/questions/${id}`)
  const card = page.locator(`#q-${id}`)
  await card.waitFor()
  return card
}

const backupQuestion = {
  message: 'Which backup should tonight’s restore drill use?\n\nThe drill restores the **orders** database.',
  fields: [
    { name: 'backup', label: 'Backup', kind: 'select', required: true, options: [{ value: 'daily', label: 'Last night’s daily' }, { value: 'weekly', label: 'Sunday’s weekly' }] }
  ],
  to: 'ops',
  wait: '10m',
  request_id: 'restore-drill-1'
}

test('a staff member sets up a group on her phone; its members get the agent’s questions, one answer or two approvals resolve them', async () => {
  const db = tempDB()
  addPerson(db, 'carol', 'staff')
  const tokens = { ann: addPerson(db, 'ann'), bob: addPerson(db, 'bob'), dee: addPerson(db, 'dee') }
  const hook = await receiver()
  const parley = await startParley({ db, auth: 'local', env: { PARLEY_CHANNEL_NETWORKS: '127.0.0.1/32' } }) // the test's webhook is on loopback
  const clients = []
  const contexts = []
  try {
    // Carol, staff, finds Groups in the top bar, then sets up ops on her phone by keyboard.
    const carol = await signIn(parley.url, 'carol')
    contexts.push(carol.context)
    await carol.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Groups' }).click()
    await carol.page.waitForURL(parley.url + '/review/groups')
    await carol.page.setViewportSize(phone)
    const cp = carol.page
    await cp.getByText('No groups yet.').waitFor()
    await cp.getByLabel('New group').focus()
    await cp.keyboard.type('ops')
    await cp.keyboard.press('Tab')
    assert.ok(await cp.getByLabel('Members', { exact: true }).evaluate((el) => el === document.activeElement), 'Tab goes on to the members')
    await cp.keyboard.type('bob, dee')
    await cp.keyboard.press('Enter')
    await cp.waitForURL(parley.url + '/review/groups#group-ops')
    const ops = cp.getByRole('region', { name: 'ops' })
    await ops.waitFor()
    const roleOf = async (name) => (await ops.getByRole('row').filter({ has: cp.getByRole('cell', { name, exact: true }) }).innerText()).replace(/\s+/g, ' ').trim()
    assert.match(await roleOf('bob'), /^bob Member: gets its questions Remove$/)
    assert.match(await roleOf('dee'), /^dee Member: gets its questions Remove$/)

    // Ann may ask the group, without getting its questions: "As: Askers", by keyboard.
    await ops.getByLabel('Add people').focus()
    await cp.keyboard.type('ann')
    await cp.keyboard.press('Tab')
    const as = ops.getByRole('combobox', { name: 'As', exact: true })
    assert.ok(await as.evaluate((el) => el === document.activeElement), 'Tab goes on to “As”')
    await cp.keyboard.press('ArrowDown')
    assert.equal(await as.inputValue(), 'asker')
    await cp.keyboard.press('Tab')
    assert.ok(await ops.getByRole('button', { name: 'Add', exact: true }).first().evaluate((el) => el === document.activeElement), 'Tab goes on to Add')
    await cp.keyboard.press('Enter')
    await until(async () => assert.match(await roleOf('ann'), /^ann Asker: may ask it Remove$/), 'ann is an asker of ops')
    assert.equal(await ops.getByRole('button', { name: 'Remove ann from ops' }).count(), 1)

    // The group's webhook: the Kind is Webhook already; the URL, then Enter.
    assert.equal(await ops.getByLabel('Kind').inputValue(), 'webhook')
    await ops.getByLabel('URL or address').focus()
    await cp.keyboard.type(hook.url)
    await cp.keyboard.press('Enter')
    const channel = ops.locator('.channel-list li', { hasText: hook.url })
    await channel.waitFor()
    assert.match(await channel.innerText(), /Webhook[\s\S]*Nothing sent yet/)
    await noSideways(cp, 'the groups on a phone')
    await axeLightAndDark(cp, 'the groups at 390 px')
    await cp.screenshot({ path: join(results, 'groups-phone.png'), fullPage: true })

    // Ann's agent asks the group, and waits.
    const annAgent = await agent(parley.url, tokens.ann)
    clients.push(annAgent)
    const ask = call(annAgent, 'ask_person', backupQuestion)

    // The webhook hears of it at once, with a link to the question's own page.
    const first = await until(() => {
      const p = hook.posts.find((p) => p.body?.text?.includes('Which backup should tonight’s restore drill use?'))
      assert.ok(p, `no post names the question yet (${hook.posts.length} posts)`)
      return p
    }, 'the webhook hears of the question')
    assert.equal(first.method, 'POST')
    assert.match(first.type, /^application\/json/)
    assert.equal(first.body.parley.event, 'question.asked')
    assert.equal(first.body.parley.owner, 'ann')
    const m = first.body.parley.url.match(/\/questions\/(\d+)$/)
    assert.ok(m, `the link is to the question's page: ${first.body.parley.url}`)
    const id = m[1]
    assert.equal(first.body.parley.url, `${parley.url}/questions/${id}`)
    assert.match(first.body.text, /^Claude Code, for ann, asks the group ops: Which backup should tonight’s restore drill use\?\nAnswer in Parley: http:\/\/\S+\/questions\/\d+$/)
    // And the group's card says it was delivered.
    await until(async () => {
      await cp.reload()
      await channel.getByText('Delivered').waitFor({ timeout: 1000 })
    }, 'the channel says Delivered')

    // Bob is at his desk, dee on her phone in dark mode, ann on her phone too.
    const bob = await signIn(parley.url, 'bob')
    const dee = await signIn(parley.url, 'dee', { viewport: phone, isMobile: true, hasTouch: true, colorScheme: 'dark' })
    const ann = await signIn(parley.url, 'ann', { viewport: phone, isMobile: true, hasTouch: true })
    contexts.push(bob.context, dee.context, ann.context)

    // Both members find it in their Inbox, each following it to its page.
    const text = 'Which backup should tonight’s restore drill use?'
    const deeCard = await openFromInbox(dee.page, parley.url, text, id)
    assert.ok(await dee.page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), 'dee\'s page is dark')
    assert.equal(await dee.page.getByRole('heading', { level: 1 }).innerText(), text)
    await deeCard.getByText('For the group ops').waitFor()
    await deeCard.locator('.body strong', { hasText: 'orders' }).waitFor()
    await deeCard.getByLabel('Backup').waitFor()
    await noSideways(dee.page, 'the question on a phone')
    await axe(dee.page, 'a group question at 390 px, dark')
    await dee.page.emulateMedia({ colorScheme: 'light' })
    await axe(dee.page, 'a group question at 390 px')
    await dee.page.emulateMedia({ colorScheme: 'dark' })
    await dee.page.screenshot({ path: join(results, 'groups-question-phone-dark.png'), fullPage: true })
    const bobCard = await openFromInbox(bob.page, parley.url, text, id)

    // Ann asked it: her Inbox does not list it, it is her group's to answer.
    await ann.page.goto(parley.url + '/inbox')
    await ann.page.getByText('Nothing is waiting.').waitFor()
    assert.equal(await ann.page.getByRole('link', { name: text }).count(), 0)

    // Bob answers; the answer comes back to ann's agent, saying it was bob.
    await bobCard.getByLabel('Backup').selectOption('weekly')
    await bobCard.getByRole('button', { name: 'Submit' }).click()
    const answered = await ask.result
    assert.ok(!answered.isError, JSON.stringify(answered))
    const a = answered.structuredContent
    assert.equal(a.outcome, 'answered')
    assert.deepEqual(a.values, { backup: 'weekly' })
    assert.equal(a.by, 'bob')
    assert.equal(String(a.question_id), id)
    assert.equal(a.url, first.body.parley.url, 'the result links to the page the webhook linked to')
    for (const p of ask.progress) assert.match(p.message, /^Waiting for .* to answer question \d+ in Parley\.$/)
    await bobCard.locator('.badge.outcome-answered').waitFor()
    await bobCard.locator('.answers dd', { hasText: 'Sunday’s weekly' }).waitFor()

    // Dee's page, reloaded, shows it answered: no form left to answer it with.
    await dee.page.reload()
    await deeCard.locator('.badge.outcome-answered').waitFor()
    await deeCard.locator('.answers dd', { hasText: 'Sunday’s weekly' }).waitFor()
    assert.equal(await deeCard.locator('form.q-form').count(), 0, 'no form on an answered question')
    assert.equal(await deeCard.getByRole('button', { name: 'Submit' }).count(), 0)
    await axe(dee.page, 'an answered group question at 390 px, dark')
    await dee.page.goto(parley.url + '/inbox')
    await dee.page.getByText('Nothing is waiting.').waitFor()

    // A request for approval that two of ops must give. The webhook is busy the first time
    // it hears of it: the group's card says so, and it is told again later.
    hook.failOnce((p) => p.body?.text?.includes('Scale the api service to 3 replicas'))
    const approval = call(annAgent, 'request_approval', {
      action: 'Scale the api service to 3 replicas',
      details: 'Traffic doubled since Monday.',
      arguments: { service: 'api', replicas: 3 },
      to: 'ops',
      approvals: 2,
      wait: '10m',
      request_id: 'scale-api-3'
    })
    const failed = await until(() => {
      const p = hook.posts.find((p) => p.status === 503)
      assert.ok(p, 'not posted yet')
      return p
    }, 'the webhook hears of the approval')
    const approvalID = failed.body.parley.url.match(/\/questions\/(\d+)$/)?.[1]
    assert.ok(approvalID, failed.body.parley.url)
    assert.equal(failed.body.parley.url, `${parley.url}/questions/${approvalID}`)
    assert.match(failed.body.text, /^Claude Code, for ann, asks the group ops: .*Scale the api service to 3 replicas\nAnswer in Parley: http:\/\/\S+\/questions\/\d+$/)
    await until(async () => {
      await cp.reload()
      await channel.getByText(/Failed.*the webhook answered 503 Service Unavailable \(trying again at \d\d:\d\d:\d\d UTC\)/).waitFor({ timeout: 1000 })
    }, 'the channel says the delivery failed')
    await noSideways(cp, 'the groups with a failed channel on a phone')
    await axeLightAndDark(cp, 'the groups with a failed channel at 390 px')

    // Bob approves on the question's page; the card says his approval waits for one more.
    const approvalText = 'Approve: Scale the api service to 3 replicas'
    const bobApproval = await openFromInbox(bob.page, parley.url, approvalText, approvalID)
    assert.equal(await bobApproval.getByLabel('Service').inputValue(), 'api')
    assert.equal(await bobApproval.getByLabel('Replicas').inputValue(), '3')
    await bobApproval.locator('.approvals', { hasText: 'Needs 2 approvals.' }).waitFor()
    await bobApproval.getByRole('button', { name: 'Approve' }).click()
    // The card the answer patches in names him among the approvals (it ought to say “You
    // approved” already: it is rendered without the viewer, so it shows the form again);
    // the page, read again, says his approval waits for one more.
    await bobApproval.getByText(/Approved so far: bob\b/).waitFor()
    await bob.page.reload()
    const waiting = bobApproval.locator('.waiting-for')
    await waiting.waitFor()
    assert.equal((await waiting.innerText()).trim(), 'You approved. Waiting for 1 more of the group ops to approve; anyone may still reject. Approved so far: bob.')
    assert.equal(await bobApproval.getByRole('button', { name: 'Approve' }).count(), 0, 'bob cannot approve twice')

    // Dee's card says who approved so far.
    const deeApproval = await openFromInbox(dee.page, parley.url, approvalText, approvalID)
    const line = deeApproval.locator('.approvals')
    await line.waitFor()
    assert.equal((await line.innerText()).replace(/\s+/g, ' ').trim(), 'Needs 2 approvals. Approved so far: bob (1 of 2).')
    await noSideways(dee.page, 'the approval on a phone')
    await axe(dee.page, 'a group approval at 390 px, dark')

    // Meanwhile ann tries channels of her own on her phone: an email address (no SMTP server
    // here: refused, saying so), an ntfy topic inside the office network (refused by the
    // operator's network rule), and a webhook that is no URL; each keeps what was typed.
    await ann.page.goto(parley.url + '/settings')
    const mine = ann.page.getByRole('region', { name: 'Notifications elsewhere' })
    const tryChannel = async (kind, target, refusal) => {
      await mine.getByLabel('Kind').selectOption(kind)
      await mine.getByLabel('URL or address').fill(target)
      const [refused] = await Promise.all([
        ann.page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === parley.url + '/settings/channels'),
        mine.getByRole('button', { name: 'Add', exact: true }).tap()
      ])
      assert.equal(refused.status(), 422)
      await mine.getByRole('alert').filter({ hasText: refusal }).waitFor()
      assert.equal(await mine.getByLabel('URL or address').inputValue(), target, 'what was typed is kept')
      assert.equal(await mine.getByLabel('Kind').inputValue(), kind)
    }
    await tryChannel('email', 'ann@example.com', 'Parley cannot send email yet')
    await tryChannel('ntfy', 'http://10.0.0.7/ann-alerts', 'That address is refused: 10.0.0.7 is a private address')
    await tryChannel('webhook', 'not a url', 'A webhook is an http:// or https:// URL.')
    assert.equal(await mine.locator('.channel-list li').count(), 0, 'nothing added')
    await noSideways(ann.page, 'the settings on a phone')
    await axeLightAndDark(ann.page, 'the settings at 390 px')
    await ann.page.screenshot({ path: join(results, 'groups-settings-phone.png'), fullPage: true })

    // The webhook is told again (after the backoff, 30 s), and the group's card says so.
    const retried = await until(() => {
      const p = hook.posts.find((p) => p !== failed && p.status === 200 && p.body?.parley?.url === failed.body.parley.url)
      assert.ok(p, 'not retried yet')
      return p
    }, 'the webhook is told again', 120_000)
    assert.equal(retried.body.text, failed.body.text)
    await until(async () => {
      await cp.reload()
      await channel.getByText('Delivered').waitFor({ timeout: 1000 })
    }, 'the channel says Delivered again')

    // Dee approves too: the agent has its two approvals, by bob and dee.
    await dee.page.reload()
    await deeApproval.getByRole('button', { name: 'Approve' }).tap()
    const approvalResult = await approval.result
    assert.ok(!approvalResult.isError, JSON.stringify(approvalResult))
    const ok = approvalResult.structuredContent
    assert.equal(ok.outcome, 'approved')
    assert.equal(ok.approved, true)
    assert.deepEqual(ok.arguments, { service: 'api', replicas: 3 })
    assert.equal(ok.by, 'bob, dee')
    // It waited longer than the 25 s between progress notifications.
    assert.ok(approval.progress.length > 0, 'progress came while it waited')
    for (const p of approval.progress) assert.match(p.message, new RegExp(`^Waiting for .+ to answer question ${approvalID} in Parley\\.$`))
    await deeApproval.locator('.badge.outcome-answered').waitFor()
    await bob.page.reload()
    await bobApproval.locator('.badge.outcome-answered').waitFor()

    // Two questions, each told to the group's webhook (the second twice), nothing else.
    assert.deepEqual(hook.posts.map((p) => p.status), [200, 503, 200])
    for (const p of hook.posts) assert.equal(p.agent, 'Parley')
    assert.deepEqual([...carol.errors, ...bob.errors, ...dee.errors, ...ann.errors], [])
  } finally {
    for (const c of clients) await c.close().catch(() => {})
    for (const c of contexts) await c.close()
    await parley.stop()
    await hook.close()
  }
})
