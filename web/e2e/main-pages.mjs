// The main pages a person sees, ready to be looked at (looks.test.mjs) and audited
// (lighthouse.test.mjs): home, a conversation whose agent waits for an answer, Review (as
// staff), Inbox and Settings, for a staff person signed in.
import assert from 'node:assert/strict'
import { startParley, tempDB, startConversation } from './harness.mjs'
import { addPerson, signIn } from './people.mjs'

// mainPages starts Parley with accounts, signs a staff person in (in a context of the
// browser's own, closed after) and starts the conversation with a question pending (the
// platform engineer asks for the pull request's details). It returns the server, the
// pages' paths by name, the session (Playwright's storage state) and its Cookie header.
export async function mainPages (browser) {
  const db = tempDB()
  addPerson(db, 'ada', 'staff')
  const parley = await startParley({ db, auth: 'local' })
  let context
  try {
    const signedIn = await signIn(browser, parley.url, 'ada')
    context = signedIn.context
    const page = signedIn.page
    await startConversation(page, parley.url, /Platform engineer/, 'Open a pull request for the login fix')
    await page.getByLabel(pendingField).waitFor()
    const pages = {
      home: '/',
      conversation: new URL(page.url()).pathname,
      review: '/review',
      inbox: '/inbox',
      settings: '/settings'
    }
    const session = await context.storageState()
    const cookie = session.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
    assert.deepEqual(signedIn.errors, [])
    return { parley, pages, session, cookie }
  } catch (e) {
    await parley.stop()
    throw e
  } finally {
    await context?.close()
  }
}

// pendingField labels the first field of the conversation's waiting question.
export const pendingField = /^Branch name/
