// Web Push on this device. Every page registers the service worker (/sw.js), which shows the
// notifications of questions and makes Parley installable. On Settings, "Notify this device"
// subscribes this browser to Web Push and gives the subscription to Parley; the device
// listed as this browser's is marked, and can stop being notified.

const supported = 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window
const registered = 'serviceWorker' in navigator
  ? navigator.serviceWorker.register('/sw.js').catch((e) => { console.warn('Parley: no service worker:', e); return null })
  : Promise.resolve(null)

const button = document.getElementById('push-subscribe')
const status = document.getElementById('push-status')
// A message kept across the reload that lists a device just added or removed.
const carried = 'parley.push.said'
let busy = false
let mine = null // this browser's entry in the list of devices

const say = (text) => { status.textContent = text }

// fromBase64url decodes the server's public key (an uncompressed P-256 point).
function fromBase64url (s) {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '=')
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
}

function sameKey (buf, key) {
  if (!buf || buf.byteLength !== key.length) return false
  return new Uint8Array(buf).every((v, i) => v === key[i])
}

// listed is the entry of the list of devices whose endpoint is this subscription's.
function listed (sub) {
  if (!sub) return null
  for (const input of document.querySelectorAll('#devices input[name=endpoint]')) {
    if (input.value === sub.endpoint) return input.closest('li')
  }
  return null
}

// show marks this browser's entry and names what the button does.
function show (li) {
  mine = li
  if (li) li.querySelector('.this-device').hidden = false
  button.textContent = li ? 'Stop notifying this device' : 'Notify this device'
}

// problem is what a failed step of subscribing tells the person.
async function problem (res, what) {
  let why = `${res.status} ${res.statusText}`
  try {
    why = (await res.json()).error.message || why
  } catch {}
  return new Error(`${what}: ${why}`)
}

async function subscribe () {
  const p = await Notification.requestPermission()
  if (p === 'denied') return say('Notifications are blocked for this site: allow them in the browser’s site settings, then try again.')
  if (p !== 'granted') return say('Notifications were not allowed: press “Notify this device” again, and allow them.')
  say('Setting up notifications for this device…')
  if (!(await registered)) throw new Error('This browser did not start Parley’s service worker; reload the page and try again')
  const reg = await navigator.serviceWorker.ready
  const r = await fetch('/api/v1/push/key', { credentials: 'same-origin' })
  if (!r.ok) throw await problem(r, 'Parley cannot send notifications')
  const key = fromBase64url((await r.json()).public_key)
  let sub = await reg.pushManager.getSubscription()
  if (sub && !sameKey(sub.options.applicationServerKey, key)) {
    await sub.unsubscribe() // made for another key of Parley's: useless now
    sub = null
  }
  try {
    sub ||= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key })
  } catch (e) {
    throw new Error(`The browser did not subscribe this device to push messages (${e.message}): a private window cannot be, and otherwise its push service may be out of reach`)
  }
  const res = await fetch('/api/v1/push/subscriptions', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(sub.toJSON())
  })
  if (res.status !== 201) throw await problem(res, 'Parley did not add this device')
  sessionStorage.setItem(carried, 'This device will be notified.')
  location.reload()
}

async function unsubscribe () {
  const reg = await registered
  const sub = await reg?.pushManager.getSubscription()
  if (sub) {
    const res = await fetch('/api/v1/push/subscriptions', {
      method: 'DELETE',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ endpoint: sub.endpoint })
    })
    if (!res.ok && res.status !== 404) throw await problem(res, 'Parley did not remove this device')
    await sub.unsubscribe()
  }
  sessionStorage.setItem(carried, 'This device will no longer be notified.')
  location.reload()
}

async function setUp () {
  if (!supported) {
    document.getElementById('push-unsupported').hidden = false
    return
  }
  const reg = await registered
  show(listed(await reg?.pushManager.getSubscription()))
  button.hidden = false
  const said = sessionStorage.getItem(carried)
  if (said) {
    sessionStorage.removeItem(carried)
    say(said)
    button.focus()
  }
  button.addEventListener('click', async () => {
    if (busy) return
    busy = true
    button.setAttribute('aria-busy', 'true')
    try {
      await (mine ? unsubscribe() : subscribe())
    } catch (e) {
      const m = e instanceof TypeError && /fetch/i.test(e.message) ? 'Parley could not be reached: try again' : e.message
      say(/[.!?]$/.test(m) ? m : m + '.')
    } finally {
      busy = false
      button.removeAttribute('aria-busy')
    }
  })
  // Removing this browser's entry from the list also ends its subscription here.
  mine?.querySelector('form')?.addEventListener('submit', async (e) => {
    e.preventDefault()
    try {
      await (await reg.pushManager.getSubscription())?.unsubscribe()
    } catch {}
    e.target.submit()
  }, { once: true })
}

if (button && status) setUp().catch((e) => console.warn('Parley: notifying this device:', e))
