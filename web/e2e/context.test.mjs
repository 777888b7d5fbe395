// A model's question with its context, in the browser on a phone: a text as Markdown, an
// object as a list of keys with a table and folded details; nothing in it runs, the page
// does not scroll sideways, axe passes in light and dark.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startParley, launch, tempDB, startConversation, pageErrors, axe, results } from './harness.mjs'
import { startFakeOpenAI } from './fake-openai.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

const trap = '<img src=x onerror="window.ran=1"> <div data-on:click="window.ran=1">click</div>'
const objectContext = {
  build: '1.4.2',
  tests: { passed: 212, failed: 0 },
  'data-on:click': trap,
  venues: [
    { id: 'loft', name: 'Pike Loft on the third floor of the old cannery', capacity: 40, price: 1200, notes: 'Quiet, with a view of the water and the ferry terminal' },
    { id: 'hall', name: 'Union Hall', capacity: 120, price: 3400, contact: { email: 'events@union.example' } }
  ]
}

test('a model question shows its context: text and object, inert, at 390 px, light and dark', async () => {
  const model = await startFakeOpenAI({
    context: (message) => /venue/.test(JSON.stringify(message))
      ? objectContext
      : 'Build 1.4.2 passed **212/212** tests.\n\nRollback takes about 3 minutes. ' + trap
  })
  const parley = await startParley({
    db: tempDB(),
    env: { PARLEY_OPENAI_BASE_URL: model.url, PARLEY_OPENAI_MODEL: 'fake-model' }
  })
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
  const page = await context.newPage()
  const errors = pageErrors(page)
  const noSideways = async (what) => assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), `no sideways scrolling at 390 px: ${what}`)
  try {
    // A text: Markdown under the prompt.
    await startConversation(page, parley.url, /fake-model/, 'Deploy the release')
    const text = page.locator('#thread section.question .q-context')
    await text.waitFor({ timeout: 15000 })
    assert.equal(await text.locator('strong').innerText(), '212/212')
    assert.match(await text.innerText(), /Rollback takes about 3 minutes/)
    assert.equal(await text.locator('img, [data-on\\:click]').count(), 0)
    await noSideways('a text context')
    await axe(page, 'a question with a text context (light, phone)')
    await page.emulateMedia({ colorScheme: 'dark' })
    await axe(page, 'a question with a text context (dark, phone)')
    await page.emulateMedia({ colorScheme: 'light' })

    // An object: keys and values, a table that scrolls in its own box, nested values folded.
    await startConversation(page, parley.url, /fake-model/, 'Find a venue for the launch')
    const obj = page.locator('#thread section.question .q-context')
    await obj.waitFor({ timeout: 15000 })
    assert.equal(await obj.locator('dl.ctx-object > dt').first().innerText(), 'Build')
    const dd = obj.locator('dl.ctx-object > dt:has-text("Data on:click") + dd')
    assert.equal(await dd.innerText(), trap)
    await dd.click()
    assert.equal(await page.evaluate(() => window.ran), undefined, 'nothing in the context ran')
    const table = obj.locator('table.ctx-table')
    assert.deepEqual(await table.locator('th[scope=col]').allInnerTexts(), ['Capacity', 'ID', 'Name', 'Notes', 'Price', 'Contact'])
    assert.deepEqual(await table.locator('tbody tr').first().locator('td').allInnerTexts(),
      ['40', 'loft', objectContext.venues[0].name, objectContext.venues[0].notes, '1200', ''])
    const tests = obj.locator('dl.ctx-object > dd > details.ctx-fold')
    assert.equal(await tests.locator('summary').innerText(), 'Failed, Passed')
    assert.equal(await tests.getAttribute('open'), null, 'a nested object starts folded')
    await tests.locator('summary').click()
    await tests.getByText('212').waitFor()
    await table.locator('details.ctx-fold summary').click()
    await table.getByText('events@union.example').waitFor()
    await noSideways('an object context with a table')
    const card = page.locator('#thread section.question')
    await card.screenshot({ path: join(results, 'context-object.png') })
    await axe(page, 'a question with an object context (light, phone)')
    await page.emulateMedia({ colorScheme: 'dark' })
    await axe(page, 'a question with an object context (dark, phone)')
    await card.screenshot({ path: join(results, 'context-object-dark.png') })

    // Answered, the card keeps its context; the model got back its own call as it made it.
    await page.getByLabel(/^Audience/).selectOption('partners')
    await page.getByLabel(/^Attendees/).fill('40')
    await page.getByRole('button', { name: 'Submit' }).click()
    await page.locator('#state .state-done').waitFor({ timeout: 15000 })
    assert.equal(await page.locator('#thread section.question .q-context table.ctx-table').count(), 1)
    const call = model.requests.at(-1).messages.find((m) => m.tool_calls)
    assert.deepEqual(JSON.parse(call.tool_calls[0].function.arguments).context, objectContext)
    assert.deepEqual(errors, [])
  } finally {
    await context.close()
    await parley.stop()
    await model.close()
  }
})
