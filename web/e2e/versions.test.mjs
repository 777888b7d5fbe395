// Versions of a conversation and the queue, as a person uses them: Regenerate gives another
// reply and "‹ 2 / 2 ›" moves between them; Edit sends a changed message in a new version and
// the earlier one stays a click away; a message written while the agent works waits under
// the thread until it finishes. Narrow, dark and under axe; two people at once; staff read
// the versions without changing them.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors, startConversation, axe } from './harness.mjs'
import { startStream } from './fake-openai.mjs'
import { addPerson, signIn, until } from './people.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// startReplies serves a model that answers each message of the person's with a reply of its
// own, numbered ("Reply 3 to “…”."), one word at a time. While held (hold()), a reply stops
// after its first words until released (go()), or until Parley gives the request up; held
// tells when replies wait.
function startReplies () {
  const requests = []
  let n = 0
  let holding = false
  let release = () => {}
  let gate = Promise.resolve()
  let waiting = 0
  let waiters = []
  const wake = () => {
    waiters = waiters.filter((w) => waiting < w.k || w.resolve())
  }
  const server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = JSON.parse(raw)
    requests.push(body)
    const send = startStream(res, body.model)
    const asked = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? ''
    const words = `Reply ${++n} to “${asked.split('\n').at(-1)}”, written word by word.`.split(/(?<= )/)
    let gone = false
    res.on('close', () => { if (!res.writableEnded) gone = true })
    const wait = holding ? gate : null
    send({ role: 'assistant', content: '' })
    for (const [i, w] of words.entries()) {
      if (gone) return
      send({ content: w })
      if (i === 4 && wait) {
        waiting++
        wake()
        await Promise.race([wait, new Promise((resolve) => res.on('close', resolve))])
        waiting--
      }
    }
    if (gone) return
    send({}, 'stop')
    res.end('data: [DONE]\n\n')
  })
  const model = {
    requests,
    // hold makes the next replies wait after their first words; hold(false) lets the next
    // ones through (a reply waiting still waits).
    hold (on = true) {
      holding = on
      if (on) gate = new Promise((resolve) => { release = resolve })
    },
    // held resolves once k replies wait.
    held: (k = 1) => new Promise((resolve) => { waiters.push({ k, resolve }); wake() }),
    // go lets the waiting reply (and the next ones) finish.
    go () { holding = false; release() },
    // asked is the person's messages the model was given in request i (-1: the last).
    asked: (i = -1) => requests.at(i).messages.filter((m) => m.role === 'user').map((m) => m.content),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) })
  }
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    model.url = `http://127.0.0.1:${server.address().port}/v1`
    resolve(model)
  }))
}

const modelEnv = (model) => ({ PARLEY_OPENAI_BASE_URL: model.url, PARLEY_OPENAI_MODEL: 'fake-model' })
const start = (page, parley, text) => startConversation(page, parley.url, /fake-model/, text)

// done waits for the run to end done, and for the reply that finished it to be drawn whole.
async function done (page) {
  await page.locator('#state .state-done').waitFor()
  await page.locator('.msg.agent.streaming').waitFor({ state: 'detached' })
}

const agentReplies = (page) => page.locator('#thread .msg.agent .body').allInnerTexts()
const personMessages = (page) => page.locator('#thread .msg.user:not(.queued) .body').allInnerTexts()
const count = (page) => page.locator('#thread .versions .versions-count')

test('Regenerate: another reply streams in, ‹ 2 / 2 › moves between them, a reload keeps the choice, all by keyboard', async () => {
  const model = await startReplies()
  const parley = await startParley({ db: tempDB(), env: modelEnv(model) })
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
  const errors = pageErrors(page)
  try {
    await start(page, parley, 'Name a colour')
    await done(page)
    assert.deepEqual(await agentReplies(page), ['Reply 1 to “Name a colour”, written word by word.'])
    assert.equal(await page.locator('#thread .versions').count(), 0, 'one version: no switch')

    // Regenerate, from the keyboard: the new reply streams in under "2 / 2".
    model.hold()
    const held = model.held()
    const regenerate = page.getByRole('button', { name: 'Regenerate the last reply' })
    await regenerate.focus()
    await page.keyboard.press('Enter')
    await held
    const streaming = page.locator('#thread .msg.agent.streaming')
    await streaming.getByText(/Reply 2 to/).waitFor()
    await count(page).getByText('2 / 2').waitFor()
    assert.equal(await page.locator('#thread .msg.agent:not(.streaming)').count(), 0, 'the first reply is not shown under version 2')
    await until(async () => assert.equal(await page.getByRole('button', { name: 'Previous version' }).isDisabled(), true), 'no switching while the agent writes')
    await until(async () => assert.equal(await regenerate.count(), 0), 'no Regenerate while the agent writes')
    model.go()
    await done(page)
    assert.deepEqual(await agentReplies(page), ['Reply 2 to “Name a colour”, written word by word.'])
    assert.deepEqual(await personMessages(page), ['Name a colour'])
    assert.deepEqual(model.asked(), ['Name a colour'], 'the model was asked the same again')
    await page.screenshot({ path: join(results, 'versions-regenerated.png') })

    // Previous shows the first reply again; Next comes back. By keyboard: focus, Enter.
    const previous = page.getByRole('button', { name: 'Previous version' })
    const next = page.getByRole('button', { name: 'Next version' })
    assert.equal(await next.isDisabled(), true, 'the last version has no next')
    await previous.focus()
    await page.keyboard.press('Enter')
    await count(page).getByText('1 / 2').waitFor()
    await page.locator('#thread .msg.agent', { hasText: 'Reply 1 to' }).waitFor()
    assert.deepEqual(await agentReplies(page), ['Reply 1 to “Name a colour”, written word by word.'])
    assert.equal(await previous.isDisabled(), true, 'the first version has no previous')
    // Tab goes on from where the person was, to Next.
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Next version')
    await page.keyboard.press('Enter')
    await count(page).getByText('2 / 2').waitFor()
    assert.deepEqual(await agentReplies(page), ['Reply 2 to “Name a colour”, written word by word.'])

    // The choice is kept: back to the first, then a reload shows it still.
    await previous.click()
    await count(page).getByText('1 / 2').waitFor()
    await page.reload()
    await count(page).getByText('1 / 2').waitFor()
    assert.deepEqual(await agentReplies(page), ['Reply 1 to “Name a colour”, written word by word.'])
    assert.equal(model.requests.length, 2, 'moving between versions asks the model nothing')

    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
    await model.close()
  }
})

test('Edit an earlier message: Esc leaves it, Enter sends it in a new version, the original stays a click away', async () => {
  const model = await startReplies()
  const parley = await startParley({ db: tempDB(), env: modelEnv(model) })
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
  const errors = pageErrors(page)
  try {
    await start(page, parley, 'Plan a picnic')
    await done(page)
    const box = page.getByLabel('Message', { exact: true })
    await box.fill('Add a dessert')
    await box.press('Enter')
    await page.locator('#thread .msg.agent', { hasText: 'Reply 2 to “Add a dessert”' }).waitFor()
    await done(page)
    const original = {
      people: ['Plan a picnic', 'Add a dessert'],
      replies: ['Reply 1 to “Plan a picnic”, written word by word.', 'Reply 2 to “Add a dessert”, written word by word.']
    }
    assert.deepEqual(await personMessages(page), original.people)

    // The first message, not the last: its form opens with what was written, ready to type.
    const first = page.locator('#thread .msg.user', { hasText: 'Plan a picnic' })
    const edit = first.getByRole('button', { name: 'Edit this message' })
    const text = first.getByLabel('Edit your message')
    const focused = (el, what) => until(async () => assert.ok(await el.evaluate((e) => e === document.activeElement)), what)
    await edit.click()
    await text.waitFor()
    assert.equal(await text.inputValue(), 'Plan a picnic')
    await focused(text, 'the open form has the keyboard')
    await page.keyboard.type(' by the lake')
    assert.equal(await text.inputValue(), 'Plan a picnic by the lake')
    await page.screenshot({ path: join(results, 'versions-edit-form.png') })
    // Esc leaves the message as it was, forgets what was typed, and gives Edit the keyboard back.
    await text.press('Escape')
    await text.waitFor({ state: 'hidden' })
    await focused(edit, 'Edit has the keyboard again')
    assert.deepEqual(await personMessages(page), original.people)
    assert.equal(model.requests.length, 2)

    // Edit again, from the keyboard; Enter sends: the thread is the edited message and its
    // reply, no more.
    await page.keyboard.press('Enter')
    await focused(text, 'the form has the keyboard')
    assert.equal(await text.inputValue(), 'Plan a picnic', 'what was typed before Esc is gone')
    await page.keyboard.type(' for six')
    await page.keyboard.press('Enter')
    await page.locator('#thread .msg.agent', { hasText: 'Reply 3 to “Plan a picnic for six”' }).waitFor()
    await done(page)
    assert.deepEqual(await personMessages(page), ['Plan a picnic for six'])
    assert.deepEqual(await agentReplies(page), ['Reply 3 to “Plan a picnic for six”, written word by word.'])
    assert.equal(await page.locator('#thread').getByText('Add a dessert').count(), 0, 'the later exchange is not in this version')
    assert.deepEqual(model.asked(), ['Plan a picnic for six'], 'the agent was given the edited message alone')
    // The switch heads the part that differs: the message itself.
    assert.equal(await count(page).innerText(), '2 / 2')
    assert.equal(await page.locator('#thread > .versions + .msg.user').innerText().then((t) => t.includes('Plan a picnic for six')), true)
    await page.screenshot({ path: join(results, 'versions-edited.png') })

    // Previous: the original version, every message of it.
    await page.getByRole('button', { name: 'Previous version' }).click()
    await count(page).getByText('1 / 2').waitFor()
    await page.locator('#thread .msg.user', { hasText: 'Add a dessert' }).waitFor()
    assert.deepEqual(await personMessages(page), original.people)
    assert.deepEqual(await agentReplies(page), original.replies)
    await page.reload()
    await count(page).getByText('1 / 2').waitFor()
    assert.deepEqual(await personMessages(page), original.people)
    assert.deepEqual(await agentReplies(page), original.replies)

    // The last message of the original, edited in turn: a third version that keeps the
    // first exchange; the first switch still says which version of the first message shows.
    const last = page.locator('#thread .msg.user', { hasText: 'Add a dessert' })
    await last.getByRole('button', { name: 'Edit this message' }).click()
    // Emptied, it is refused under the form, which stays open.
    await last.getByLabel('Edit your message').fill('  ')
    await last.getByRole('button', { name: 'Send' }).click()
    await last.getByRole('alert').getByText('Write the message first.').waitFor()
    assert.equal(await last.getByLabel('Edit your message').isVisible(), true)
    await last.getByLabel('Edit your message').fill('Add a fruit salad')
    await last.getByRole('button', { name: 'Send' }).click()
    await page.locator('#thread .msg.agent', { hasText: 'Reply 4 to “Add a fruit salad”' }).waitFor()
    await done(page)
    assert.deepEqual(await personMessages(page), ['Plan a picnic', 'Add a fruit salad'])
    assert.deepEqual(await count(page).allInnerTexts(), ['1 / 2', '2 / 2'])
    assert.deepEqual(model.asked(), ['Plan a picnic', 'Add a fruit salad'])
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
    await model.close()
  }
})

test('Queue: a message written while the agent works waits, Remove takes it back, the next goes when the agent finishes; after Stop a message goes at once', async () => {
  const model = await startReplies()
  const parley = await startParley({ db: tempDB(), env: modelEnv(model) })
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
  const errors = pageErrors(page)
  const box = page.getByLabel('Message', { exact: true })
  const queued = page.locator('#queued article.msg.user.queued')
  try {
    model.hold()
    let held = model.held()
    await start(page, parley, 'Write a long story')
    await held
    await page.locator('#thread .msg.agent.streaming').getByText(/Reply 1/).waitFor()

    // Written while the agent works: it waits under the thread, with a note.
    await box.fill('Make it about a lighthouse')
    await box.press('Enter')
    await queued.waitFor()
    await until(async () => assert.equal(await box.inputValue(), ''), 'the message box is emptied')
    assert.match(await queued.innerText(), /Make it about a lighthouse[\s\S]*Will be sent when the agent finishes\./)
    assert.doesNotMatch(await queued.innerText(), /not writing now/)
    assert.equal(await page.locator('#thread .msg.agent.streaming').count(), 1, 'the reply goes on')
    // Remove takes it back.
    await queued.getByRole('button', { name: 'Remove this queued message' }).click()
    await queued.waitFor({ state: 'detached' })

    // Another one is sent when the reply ends, and answered.
    await box.fill('Keep it short')
    await box.press('Enter')
    await queued.getByText('Keep it short').waitFor()
    model.go()
    await page.locator('#thread .msg.agent', { hasText: 'Reply 2 to “Keep it short”' }).waitFor()
    await done(page)
    assert.equal(await queued.count(), 0, 'nothing waits any more')
    assert.deepEqual(await personMessages(page), ['Write a long story', 'Keep it short'])
    assert.deepEqual(await agentReplies(page), ['Reply 1 to “Write a long story”, written word by word.', 'Reply 2 to “Keep it short”, written word by word.'])
    assert.ok(model.requests.every((r) => !r.messages.some((m) => m.content?.includes('lighthouse'))), 'a removed message never reaches the agent')
    await page.reload()
    assert.deepEqual(await personMessages(page), ['Write a long story', 'Keep it short'])

    // Stop sends nothing: the queued message stays until Send now.
    model.hold()
    held = model.held()
    await box.fill('Another story')
    await box.press('Enter')
    await held
    // The send has landed once the box is empty (what is typed before stays: composer.test.mjs).
    await until(async () => assert.equal(await box.inputValue(), ''), 'the message box is emptied')
    await box.fill('With a dragon')
    await box.press('Enter')
    await queued.getByText('With a dragon').waitFor()
    await page.getByRole('button', { name: 'Stop', exact: true }).click()
    await page.locator('#state .state-stopped').waitFor()
    assert.equal(await queued.count(), 1, 'Stop sends nothing')
    assert.equal(model.requests.length, 3)
    // The note says what happens now: the agent will not finish by itself.
    await queued.getByText('The agent is not writing now: this goes when it next finishes, with your next message, or now with Send now.').waitFor()
    assert.equal(await queued.getByText('Will be sent when the agent finishes.').isVisible(), false)
    await page.reload()
    await queued.getByText('The agent is not writing now: this goes when it next finishes, with your next message, or now with Send now.').waitFor()
    assert.equal(await queued.getByText('Will be sent when the agent finishes.').isVisible(), false)
    model.go()
    await queued.getByRole('button', { name: 'Send now' }).click()
    await page.locator('#thread .msg.agent', { hasText: 'Reply 4 to “With a dragon”' }).waitFor()
    await done(page)
    assert.equal(await queued.count(), 0)
    assert.equal(await page.locator('#thread .msg.user', { hasText: 'With a dragon' }).count(), 1)

    // After Stop, a message typed is sent at once, not queued.
    model.hold()
    held = model.held()
    await box.fill('One more story')
    await box.press('Enter')
    await held
    // The send has landed once the box is empty (what is typed before stays: composer.test.mjs).
    await until(async () => assert.equal(await box.inputValue(), ''), 'the message box is emptied')
    await box.click()
    await box.press('Escape')
    await page.locator('#state .state-stopped').waitFor()
    await box.fill('Never mind, thanks')
    await box.press('Enter')
    await page.locator('#thread .msg.user', { hasText: 'Never mind, thanks' }).waitFor()
    assert.equal(await queued.count(), 0, 'not queued: the agent was stopped')
    model.go()
    await page.locator('#thread .msg.agent', { hasText: 'Reply 6 to “Never mind, thanks”' }).waitFor()
    await done(page)
    assert.equal(await page.locator('#thread .msg.agent .badge', { hasText: 'stopped' }).count(), 2, 'both stopped replies are marked')
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
    await parley.stop()
    await model.close()
  }
})

// noSidewaysScroll fails when the page is wider than the window.
async function noSidewaysScroll (page, what) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: document.documentElement.clientWidth }))
  assert.ok(scroll <= width, `${what}: the page is ${scroll}px wide in a ${width}px window`)
}

test('At 390 px, light and dark, under axe: the versions switch, an open edit form and a queued message', async () => {
  const model = await startReplies()
  const parley = await startParley({ db: tempDB(), env: modelEnv(model) })
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
  const page = await context.newPage()
  const errors = pageErrors(page)
  const box = page.getByLabel('Message', { exact: true })
  try {
    await start(page, parley, 'Suggest a name for a bakery on the corner of the old market square')
    await done(page)
    await page.getByRole('button', { name: 'Regenerate the last reply' }).click()
    await page.locator('#thread .msg.agent', { hasText: 'Reply 2 to' }).waitFor()
    await done(page)
    // The agent works on the next message; one more waits; the first message's form is open.
    model.hold()
    const held = model.held()
    await box.fill('Something shorter, please')
    await box.press('Enter')
    await held
    // The send has landed once the box is empty (what is typed before stays: composer.test.mjs).
    await until(async () => assert.equal(await box.inputValue(), ''), 'the message box is emptied')
    await box.fill('And a slogan to go with it, for the shop window and the paper bags')
    await box.press('Enter')
    const queued = page.locator('#queued article.msg.user.queued')
    await queued.waitFor()
    const first = page.locator('#thread .msg.user').first()
    await first.getByRole('button', { name: 'Edit this message' }).click()
    await first.getByLabel('Edit your message').waitFor()
    assert.equal(await count(page).innerText(), '2 / 2')

    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme })
      await noSidewaysScroll(page, scheme)
      for (const el of [page.locator('#thread .versions'), first.locator('.edit-form'), queued]) {
        const b = await el.boundingBox()
        assert.ok(b && b.x >= 0 && b.x + b.width <= 390, `${scheme}: ${await el.getAttribute('class')} fits the width (${JSON.stringify(b)})`)
      }
      // Big enough to touch.
      for (const name of ['Previous version', 'Next version', 'Remove this queued message', 'Send now']) {
        const b = await page.getByRole('button', { name }).boundingBox()
        assert.ok(b.height >= 24 && b.width >= 24, `${name} is ${b.width}x${b.height}`)
      }
      await first.locator('.edit-form').scrollIntoViewIfNeeded()
      await page.screenshot({ path: join(results, `versions-390-${scheme}.png`), fullPage: true })
      await axe(page, `a conversation with versions, an edit form and a queued message, ${scheme}`)
    }

    // Send now stops the reply and sends what waits.
    model.hold(false)
    await queued.getByRole('button', { name: 'Send now' }).click()
    await page.locator('#thread .msg.agent', { hasText: 'Reply 4 to “And a slogan' }).waitFor()
    await done(page)
    await page.locator('#thread .msg.agent', { hasText: 'Reply 3 to' }).locator('.badge', { hasText: 'stopped' }).waitFor()
    await noSidewaysScroll(page, 'after Send now')
    await axe(page, 'the conversation after Send now, dark')
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
    await model.close()
  }
})

test('Two people at once: each regenerates and edits in their own conversation and sees only their own versions', async () => {
  const model = await startReplies()
  const db = tempDB()
  addPerson(db, 'ann')
  addPerson(db, 'bob')
  const parley = await startParley({ db, auth: 'local', env: modelEnv(model) })
  const people = []
  try {
    for (const name of ['ann', 'bob']) people.push({ name, ...await signIn(browser, parley.url, name) })
    const [ann, bob] = people
    // Both start at once.
    await Promise.all(people.map(async (p) => {
      await start(p.page, parley, `${p.name}'s question`)
      await done(p.page)
      p.url = p.page.url()
    }))
    assert.notEqual(ann.url, bob.url)

    // Both regenerate at once; both replies are written at the same time.
    model.hold()
    await Promise.all(people.map((p) => p.page.getByRole('button', { name: 'Regenerate the last reply' }).click()))
    await model.held(2)
    for (const p of people) {
      await count(p.page).getByText('2 / 2').waitFor()
      await p.page.locator('#thread .msg.agent.streaming', { hasText: `to “${p.name}'s question”` }).waitFor()
    }
    model.go()
    for (const p of people) {
      await done(p.page)
      assert.equal(await count(p.page).innerText(), '2 / 2', `${p.name} has two versions`)
      const replies = await agentReplies(p.page)
      assert.equal(replies.length, 1)
      assert.match(replies[0], new RegExp(`^Reply \\d to “${p.name}'s question”`))
    }

    // Ann goes back to her first version; Bob's page stays as it is.
    await ann.page.getByRole('button', { name: 'Previous version' }).click()
    await count(ann.page).getByText('1 / 2').waitFor()
    assert.equal(await count(bob.page).innerText(), '2 / 2')

    // Both edit their message at once.
    await Promise.all(people.map(async (p) => {
      const msg = p.page.locator('#thread .msg.user').first()
      await msg.getByRole('button', { name: 'Edit this message' }).click()
      await msg.getByLabel('Edit your message').fill(`${p.name}'s better question`)
    }))
    await Promise.all(people.map((p) => p.page.locator('#thread .msg.user').first().getByLabel('Edit your message').press('Enter')))
    for (const p of people) {
      await p.page.locator('#thread .msg.agent', { hasText: `to “${p.name}'s better question”` }).waitFor()
      await done(p.page)
      // The edited message heads a version of its own: two versions of the first message.
      assert.deepEqual(await count(p.page).allInnerTexts(), ['2 / 2'], `${p.name}'s versions of the first message`)
      assert.deepEqual(await personMessages(p.page), [`${p.name}'s better question`])
      const other = p === ann ? 'bob' : 'ann'
      assert.equal(await p.page.getByText(new RegExp(`${other}'s`)).count(), 0, `${p.name} sees nothing of ${other}'s`)
    }
    // Back to the message as first written: each finds the reply they last chose there
    // (Ann the first, Bob the regenerated one).
    for (const p of people) {
      await p.page.getByRole('button', { name: 'Previous version' }).click()
      await count(p.page).first().getByText('1 / 2').waitFor()
      assert.deepEqual(await count(p.page).allInnerTexts(), ['1 / 2', p === ann ? '1 / 2' : '2 / 2'])
      assert.deepEqual(await personMessages(p.page), [`${p.name}'s question`])
      const replies = await agentReplies(p.page)
      assert.equal(replies.length, 1)
      assert.match(replies[0], new RegExp(`^Reply \\d to “${p.name}'s question”`))
    }
    for (const p of people) assert.deepEqual(p.errors, [])
  } finally {
    for (const p of people) await p.context.close()
    await parley.stop()
    await model.close()
  }
})

test('Staff review: staff read another version through the switch’s links without changing it, and the timeline lists the versions', async () => {
  const model = await startReplies()
  const db = tempDB()
  addPerson(db, 'carol', 'staff')
  addPerson(db, 'ann')
  const parley = await startParley({ db, auth: 'local', env: modelEnv(model) })
  const ann = await signIn(browser, parley.url, 'ann')
  const carol = await signIn(browser, parley.url, 'carol')
  try {
    await start(ann.page, parley, 'Which train goes to the coast?')
    await done(ann.page)
    await ann.page.getByRole('button', { name: 'Regenerate the last reply' }).click()
    await ann.page.locator('#thread .msg.agent', { hasText: 'Reply 2 to' }).waitFor()
    await done(ann.page)
    const url = ann.page.url()

    // Staff open it: the version shown, read-only, its switch made of links.
    const page = carol.page
    await page.goto(url)
    await page.getByText('You are reading ann’s conversation as staff.').waitFor()
    assert.equal(await count(page).innerText(), '2 / 2')
    assert.deepEqual(await agentReplies(page), ['Reply 2 to “Which train goes to the coast?”, written word by word.'])
    for (const name of ['Edit this message', 'Regenerate the last reply', 'Retry']) {
      assert.equal(await page.getByRole('button', { name }).count(), 0, `no ${name} for staff`)
    }
    assert.equal(await page.locator('#composer').count(), 0)
    const previous = page.getByRole('link', { name: 'Previous version' })
    assert.match(await previous.getAttribute('href'), /\?version=0$/)

    // The link opens version 1, which says so; Ann's page still shows version 2.
    await previous.click()
    await page.waitForURL(/\?version=0$/)
    await page.getByText(/You are reading version 1 of 2; the conversation shows version 2\./).waitFor()
    assert.equal(await count(page).innerText(), '1 / 2')
    assert.deepEqual(await agentReplies(page), ['Reply 1 to “Which train goes to the coast?”, written word by word.'])
    await axe(page, 'staff reading another version')
    await page.screenshot({ path: join(results, 'versions-staff.png') })
    await ann.page.reload()
    assert.equal(await count(ann.page).innerText(), '2 / 2', 'staff reading changes nothing for its owner')
    assert.deepEqual(await agentReplies(ann.page), ['Reply 2 to “Which train goes to the coast?”, written word by word.'])

    // A version pinned stays as it is when the owner moves; Next leads back to the one shown.
    await ann.page.getByRole('button', { name: 'Previous version' }).click()
    await count(ann.page).getByText('1 / 2').waitFor()
    await ann.page.getByRole('button', { name: 'Next version' }).click()
    await count(ann.page).getByText('2 / 2').waitFor()
    assert.equal(await count(page).innerText(), '1 / 2')
    await page.getByRole('link', { name: 'Next version' }).click()
    await page.waitForURL(/\?version=1$/)
    assert.deepEqual(await agentReplies(page), ['Reply 2 to “Which train goes to the coast?”, written word by word.'])

    // The conversation's own page follows the version its owner shows.
    await page.goto(url)
    await count(page).getByText('2 / 2').waitFor()
    await ann.page.getByRole('button', { name: 'Previous version' }).click()
    await count(page).getByText('1 / 2').waitFor()
    assert.deepEqual(await agentReplies(page), ['Reply 1 to “Which train goes to the coast?”, written word by word.'])

    // The timeline lists both, the one shown marked; each opens its own.
    await page.goto(url + '/timeline')
    const list = page.getByRole('navigation', { name: 'Versions' })
    await list.getByText('This conversation has 2 versions; you are reading version 1.').waitFor()
    assert.deepEqual((await list.locator('li').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()), [
      'Version 1: as first written shown Markdown',
      'Version 2: reply regenerated by ann Markdown'
    ])
    await list.getByRole('link', { name: 'Version 2: reply regenerated by ann' }).click()
    await page.waitForURL(/\/timeline\?version=1$/)
    await list.getByText('you are reading version 2.').waitFor()
    assert.match(await page.locator('.timeline').innerText(), /Reply 2 to/)
    await axe(page, 'the timeline of a conversation with versions')
    assert.deepEqual(ann.errors, [])
    assert.deepEqual(carol.errors, [])
  } finally {
    await ann.context.close()
    await carol.context.close()
    await parley.stop()
    await model.close()
  }
})
