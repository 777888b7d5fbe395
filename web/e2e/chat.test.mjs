// A conversation with the event planner held from a terminal (`parley chat` under a real
// pseudo-terminal, typed into as a person would), while a browser page shows the same
// conversation: each answer typed in the terminal shows on the page at once, and a question
// answered on the page makes the terminal's prompt give way.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { startParley, launch, tempDB, results, pageErrors, root } from './harness.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`

// terminal runs a command under a pseudo-terminal (util-linux script) and reads its screen.
function terminal (args, env) {
  const proc = spawn('script', ['-qfec', args.map(quote).join(' '), '/dev/null'], { env: { ...process.env, TERM: 'dumb', ...env } })
  let out = ''
  let mark = 0
  const collect = (b) => { out += b.toString() }
  proc.stdout.on('data', collect)
  proc.stderr.on('data', collect)
  const exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)))
  const text = () => out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '')
  return {
    proc,
    exited,
    text,
    // expect waits until what the terminal shows after the last match matches re.
    async expect (re, timeout = 30000) {
      const deadline = Date.now() + timeout
      for (;;) {
        const t = text()
        const m = re.exec(t.slice(mark))
        if (m) {
          mark += m.index + m[0].length
          return m
        }
        if (proc.exitCode !== null || Date.now() > deadline) {
          throw new Error(`the terminal did not show ${re}; it shows:\n${t.slice(-3000)}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    type (line) { proc.stdin.write(line + '\n') }
  }
}

test('parley chat: the event planner from a terminal, the browser following along', async () => {
  const db = tempDB()
  const parley = await startParley({ db })
  const page = await browser.newPage({ viewport: { width: 1000, height: 1100 } })
  const errors = pageErrors(page)
  let term
  try {
    // The one person of --auth none has an account once a page was asked for; a token of
    // theirs, made on the command line, is all the terminal needs.
    await fetch(parley.url + '/')
    const bin = join(root, 'parley')
    const token = execFileSync(bin, ['token', 'add', 'terminal', '--user', 'local', '--db', db], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim()
    assert.match(token, /^parley_[\w-]{43}$/)

    term = terminal([bin, 'chat', '--server', parley.url, '--agent', 'event-planner', 'Plan a party for 30 people'], { PARLEY_TOKEN: token })
    const [, id] = await term.expect(/Conversation (\d+) with Event planner/)
    await page.goto(`${parley.url}/c/${id}`)
    const thread = page.locator('#thread')
    const answered = page.locator('.question .outcome-answered')

    // Form 1, typed in the terminal: the page shows it answered, by the token.
    await term.expect(/four specialists/)
    await term.expect(/City or area/)
    term.type('Seattle')
    await answered.first().waitFor()
    await thread.getByText('with token terminal').first().waitFor()

    // Form 2: a selection among the venues, by its value.
    await term.expect(/Your choice/)
    term.type('south-lake-union-hall')
    await answered.nth(1).waitFor()

    // Form 3: a budget below the limit is re-asked with the server's own message.
    await term.expect(/Budget \(USD\)/)
    term.type('50')
    await term.expect(/Must be between 800 and 10,000,000\./)
    term.type('2500')
    await answered.nth(2).waitFor()

    // Form 4 is answered on the page: the terminal's prompt gives way and says so.
    await term.expect(/Decision/)
    await page.getByLabel('Decision').selectOption('approve')
    await page.locator('.question.pending').getByRole('button', { name: 'Submit' }).click()
    await term.expect(/question \d+ was answered elsewhere by local\)/)

    // Form 5: a multiselect and a multi-line note ended by a lone dot.
    await term.expect(/Dietary needs/)
    term.type('vegetarian, gluten-free')
    await term.expect(/Anything else the caterer should know/)
    term.type('One guest is coeliac.')
    term.type('Nuts are fine.')
    term.type('.')
    await answered.nth(4).waitFor()

    // Form 6: a date and the time of day.
    const inThreeWeeks = new Date(Date.now() + 21 * 24 * 3600 * 1000).toISOString().slice(0, 10)
    await term.expect(/Date/)
    term.type(inThreeWeeks)
    await term.expect(/Time of day/)
    term.type('evening')

    // The plan arrives in both.
    await term.expect(/Your event plan/)
    await thread.getByText('Your event plan').waitFor({ timeout: 20000 })
    await page.locator('#state .state-done').waitFor()
    await page.screenshot({ path: join(results, 'chat-browser.png'), fullPage: false })
    assert.equal(await page.locator('.question').count(), 6)
    assert.equal(await answered.count(), 6)
    await thread.getByText('One guest is coeliac.').first().waitFor()
    // The page after a fresh load shows the same thing as the live page.
    const live = await thread.innerText()
    await page.reload()
    assert.equal(await thread.innerText(), live)

    // Ctrl-D at the you> prompt ends the session cleanly.
    await term.expect(/you> $/)
    term.proc.stdin.write('\x04')
    assert.equal(await term.exited, 0)
    assert.deepEqual(errors, [])
  } finally {
    term?.proc.kill()
    await page.close()
    await parley.stop()
  }
})
