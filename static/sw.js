// Parley's service worker, served at /sw.js so that its scope is the whole site. It shows
// the Web Push notifications of questions, and opens a question when its notification is
// clicked. It caches nothing: Parley is live, and has no offline mode.

const fallback = 'Parley: a question waits for you'

self.addEventListener('install', () => self.skipWaiting())
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()))

// ownURL is url as an absolute URL of Parley's own origin, or Parley's start page: a
// notification never opens another site.
function ownURL (url) {
  const start = new URL('/', self.location.origin).href
  if (typeof url !== 'string' || url === '') return start
  try {
    const u = new URL(url, self.location.origin)
    if (u.origin === self.location.origin) return u.href
  } catch {}
  return start
}

// message reads a push's payload, {title, body, url}; a missing or unreadable one says only
// that a question waits.
function message (data) {
  let m = {}
  try {
    m = data ? data.json() : {}
  } catch {}
  if (!m || typeof m !== 'object') m = {}
  const text = (v) => (typeof v === 'string' ? v.trim() : '')
  return {
    title: text(m.title) || fallback,
    body: text(m.body),
    url: ownURL(m.url)
  }
}

self.addEventListener('push', (e) => {
  const m = message(e.data)
  e.waitUntil(self.registration.showNotification(m.title, {
    body: m.body,
    data: { url: m.url },
    tag: m.url, // a question notified again replaces its notification, and says so
    renotify: true,
    icon: '/static/icon-192.png',
    badge: '/static/badge-96.png'
  }))
})

self.addEventListener('notificationclick', (e) => {
  e.notification.close()
  const url = ownURL(e.notification.data && e.notification.data.url)
  e.waitUntil((async () => {
    // A Parley window already on the question (its page, or its card in the conversation)
    // comes forward; else a new window opens, and the ones open keep what they hold (a
    // message being typed). matchAll sees no other origin's windows.
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true })
    const id = (url.match(/\/questions\/(\d+)$/) || [])[1]
    const c = open.find((c) => c.url === url || (id && c.url.endsWith('#q-' + id)))
    if (c) {
      try {
        await c.focus()
        return
      } catch {} // not focusable: open a window instead
    }
    await self.clients.openWindow(url)
  })())
})
