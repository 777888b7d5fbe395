// The shell of every page: the sidebar, the theme, times, the waiting count (title, icon,
// notifications), copying, announcements for screen readers and where the focus goes.
// app.js holds what a conversation's page does with its stream and its forms.

const root = document.documentElement
const phone = matchMedia('(max-width: 820px)')

// The sidebar: a column that can be folded away (remembered), a drawer on a phone.
const sidebarToggle = document.querySelector('.sidebar-toggle')
function syncSidebar () {
  if (!sidebarToggle) return
  const open = phone.matches ? root.classList.contains('sidebar-open') : !root.classList.contains('sidebar-collapsed')
  sidebarToggle.setAttribute('aria-expanded', String(open))
}
if (sidebarToggle) {
  if (localStorage.getItem('parley.sidebar') === 'collapsed') root.classList.add('sidebar-collapsed')
  sidebarToggle.addEventListener('click', () => {
    if (phone.matches) {
      root.classList.toggle('sidebar-open')
      if (root.classList.contains('sidebar-open')) document.querySelector('#sidebar a, #sidebar input')?.focus()
    } else {
      root.classList.toggle('sidebar-collapsed')
      localStorage.setItem('parley.sidebar', root.classList.contains('sidebar-collapsed') ? 'collapsed' : 'open')
    }
    syncSidebar()
  })
  document.addEventListener('click', (e) => {
    if (e.target.closest('.sidebar-backdrop') || (phone.matches && e.target.closest('#sidebar a'))) {
      root.classList.remove('sidebar-open')
      syncSidebar()
    }
  })
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && root.classList.contains('sidebar-open')) {
      root.classList.remove('sidebar-open')
      syncSidebar()
      sidebarToggle.focus()
    }
  })
  phone.addEventListener('change', syncSidebar)
  syncSidebar()
}

// The theme: the system's, or light or dark as chosen here (a cookie, so that the server
// renders the page in it from the start).
const themes = ['system', 'light', 'dark']
const themeToggle = document.querySelector('.theme-toggle')
function currentTheme () { return root.dataset.theme || 'system' }
function syncTheme () {
  themeToggle?.setAttribute('aria-label', `Theme: ${currentTheme()} (change)`)
}
if (themeToggle) {
  syncTheme()
  themeToggle.addEventListener('click', () => {
    const next = themes[(themes.indexOf(currentTheme()) + 1) % themes.length]
    setTheme(next)
  })
}
function setTheme (t) {
  if (t === 'system') {
    delete root.dataset.theme
    document.cookie = 'parley_theme=; path=/; max-age=0; samesite=lax'
  } else {
    root.dataset.theme = t
    document.cookie = `parley_theme=${t}; path=/; max-age=31536000; samesite=lax`
  }
  syncTheme()
}
window.parleySetTheme = setTheme

// The browser's zone, for a person who set none in Settings: the server groups the sidebar's
// days in it from the next page on.
try {
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone
  if (tz && !document.cookie.split('; ').includes('parley_tz=' + encodeURIComponent(tz))) {
    document.cookie = `parley_tz=${encodeURIComponent(tz)}; path=/; max-age=31536000; samesite=lax`
  }
} catch {}

// Times: the server writes UTC; here each shows in the person's time zone (their setting, or
// the browser's), the exact moment on hover.
const zone = root.dataset.tz || undefined
const fmt = (opts) => {
  try {
    return new Intl.DateTimeFormat(undefined, { ...opts, timeZone: zone })
  } catch {
    return new Intl.DateTimeFormat(undefined, opts) // a zone this browser does not know
  }
}
const fmtTime = fmt({ hour: '2-digit', minute: '2-digit' })
const fmtDay = fmt({ month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
const fmtYear = fmt({ year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
const fmtLong = fmt({ year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' })
const fmtFull = fmt({ dateStyle: 'full', timeStyle: 'long' })
const dayKey = fmt({ year: 'numeric', month: '2-digit', day: '2-digit' })
function showTime (el) {
  const d = new Date(el.getAttribute('datetime'))
  if (isNaN(d)) return
  el.title = fmtFull.format(d)
  const style = el.dataset.time
  if (style === 'title') return
  const now = new Date()
  let text
  if (style === 'long') text = fmtLong.format(d)
  else if (dayKey.format(d) === dayKey.format(now)) text = fmtTime.format(d)
  else if (d.getFullYear() === now.getFullYear()) text = fmtDay.format(d)
  else text = fmtYear.format(d)
  if (el.textContent !== text) el.textContent = text
  el.dataset.shown = el.getAttribute('datetime')
}
function showTimes (scope) {
  for (const el of scope.querySelectorAll('time[data-time]')) {
    if (el.dataset.shown !== el.getAttribute('datetime')) showTime(el)
  }
}

// The waiting count: in the tab title and on the icon, on every page; a notification when it
// grows while the page is hidden (if the person turned them on, with a click).
const baseTitle = document.querySelector('title')?.dataset.baseTitle || document.title
const icon = document.querySelector('link[rel=icon]')
const iconHref = icon?.getAttribute('href')
let shownWaiting = -1
function drawIcon (n) {
  if (!icon) return
  if (!n) { icon.setAttribute('href', iconHref); return }
  const img = new Image()
  img.onload = () => {
    const c = document.createElement('canvas')
    c.width = c.height = 64
    const g = c.getContext('2d')
    g.drawImage(img, 0, 0, 64, 64)
    g.fillStyle = '#c4320a'
    g.beginPath()
    g.arc(44, 20, 20, 0, 2 * Math.PI)
    g.fill()
    g.fillStyle = '#fff'
    g.font = 'bold 30px sans-serif'
    g.textAlign = 'center'
    g.textBaseline = 'middle'
    g.fillText(n > 9 ? '9+' : String(n), 44, 22)
    icon.setAttribute('href', c.toDataURL('image/png'))
  }
  img.src = iconHref
}
const notifyOn = () => 'Notification' in window && Notification.permission === 'granted' && localStorage.getItem('parley.notify') === 'on'
function syncWaiting () {
  const el = document.getElementById('waiting-count')
  if (!el) return
  const n = Number(el.dataset.waiting) || 0
  if (n === shownWaiting) return
  const grew = shownWaiting >= 0 && n > shownWaiting
  shownWaiting = n
  document.title = n ? `(${n}) ${baseTitle}` : baseTitle
  drawIcon(n)
  if (grew && document.visibilityState === 'hidden' && notifyOn()) {
    const note = new Notification('Parley: an agent is asking you', {
      body: el.dataset.latestTitle || `${n} questions wait for you`,
      tag: 'parley-waiting'
    })
    note.onclick = () => { window.focus(); if (el.dataset.latestHref) location.href = el.dataset.latestHref }
  }
}
const notifyToggles = document.querySelectorAll('.notify-toggle')
function syncNotify () {
  const can = 'Notification' in window && Notification.permission !== 'denied'
  for (const b of notifyToggles) {
    b.hidden = !can
    const label = notifyOn() ? 'Turn off notifications' : 'Turn on notifications'
    if (b.classList.contains('icon-button')) { // an icon: its name says it
      b.setAttribute('aria-label', label)
      b.title = label
    } else {
      b.textContent = label
    }
    b.setAttribute('aria-pressed', String(notifyOn()))
  }
  for (const p of document.querySelectorAll('.notify-unsupported')) p.hidden = can
}
for (const b of notifyToggles) {
  b.addEventListener('click', async () => {
    if (notifyOn()) {
      localStorage.setItem('parley.notify', 'off')
    } else {
      // Permission is asked on this click, never on load.
      const p = await Notification.requestPermission()
      if (p === 'granted') localStorage.setItem('parley.notify', 'on')
    }
    syncNotify()
  })
}
syncNotify()

// The settings page offers the time zones the browser knows.
const zones = document.getElementById('time-zones')
if (zones && Intl.supportedValuesOf) {
  zones.replaceChildren(...Intl.supportedValuesOf('timeZone').map((z) => Object.assign(document.createElement('option'), { value: z })))
}

// Copy: a code block's code (the <pre> after its head), or a message's text.
document.addEventListener('click', async (e) => {
  const b = e.target.closest('button.copy')
  if (!b) return
  const head = b.closest('.code-head')
  const src = head ? head.nextElementSibling : b.closest('.msg')?.querySelector('.body')
  if (!src) return
  const label = b.dataset.label || b.getAttribute('aria-label')
  b.dataset.label = label
  let said = 'Copied'
  try {
    await navigator.clipboard.writeText(src.innerText)
  } catch {
    said = 'Copy failed'
  }
  // The name says what the button says, and what happened (a screen reader hears it).
  const text = b.querySelector('.copy-label') || b
  text.textContent = said
  b.setAttribute('aria-label', said)
  b.classList.add('done')
  toast(said === 'Copied' ? 'Copied to the clipboard' : 'Could not copy: the browser refused')
  setTimeout(() => { text.textContent = 'Copy'; b.setAttribute('aria-label', label); b.classList.remove('done') }, 1500)
})

// Toasts: a brief word of what happened in the background (a copy done, a question answered
// elsewhere), shown for a few seconds and read out by screen readers.
// The live region is in the page from the start: one made as it is filled is often not read.
const toasts = document.createElement('div')
toasts.className = 'toasts'
toasts.setAttribute('role', 'status')
toasts.setAttribute('aria-live', 'polite')
document.body.append(toasts)
function toast (text) {
  const t = document.createElement('p')
  t.className = 'toast'
  t.textContent = text
  toasts.append(t)
  setTimeout(() => t.remove(), 4000)
}
window.parleyToast = toast

// Announcements for screen readers: a finished message once, whole; a new question.
const announcer = document.createElement('div')
announcer.className = 'sr-only'
announcer.setAttribute('aria-live', 'polite')
announcer.id = 'announcer'
document.body.append(announcer)
// spoken is the text of a message as it is read out: without the code blocks' heads.
function spoken (body) {
  if (!body) return ''
  const c = body.cloneNode(true)
  c.querySelectorAll('.code-head, button').forEach((e) => e.remove())
  return c.textContent.replace(/\s+/g, ' ').trim()
}
function announce (text) {
  announcer.textContent = ''
  setTimeout(() => { announcer.textContent = text.length > 600 ? text.slice(0, 600) + '…' : text }, 50)
}
// The focus moves only when the person is not at something else: nothing has it, or the
// empty message box.
const free = () => {
  const a = document.activeElement
  return !a || a === document.body || a.id === 'content' || (a.id === 'message' && a.value === '')
}
document.addEventListener('datastar-fetch', (e) => {
  const { type, argsRaw: a } = e.detail || {}
  if (type !== 'datastar' || !a || !('e' in a)) return
  const msgs = document.querySelectorAll('#thread .msg.agent')
  const msg = msgs[msgs.length - 1]
  if (!msg) return
  const who = msg.querySelector('.who')
  if (who && !who.querySelector('time')) {
    // The end says when the message was finished, as a page drawn again shows it.
    const at = new Date(a.e)
    const t = document.createElement('time')
    t.setAttribute('datetime', (isNaN(at) ? new Date() : at).toISOString())
    t.dataset.time = 'short'
    who.querySelector('.author')?.after(t)
    showTime(t)
  }
  announce(`${msg.querySelector('.author')?.textContent || 'The agent'}: ${spoken(msg.querySelector('.body'))}`)
  if (free() && !document.querySelector('#thread .question.pending')) document.getElementById('message')?.focus({ preventScroll: true })
})
const knownQuestions = new Set([...document.querySelectorAll('#thread .question.pending')].map((q) => q.id))
// The questions this page sent an answer to: one answered otherwise was answered elsewhere
// (another tab, a colleague, the API), which a toast says.
const answeredHere = new Set()
document.addEventListener('submit', (e) => {
  const q = e.target.closest?.('.question')
  if (q) answeredHere.add(q.id)
}, true)
function settledQuestions () {
  for (const id of knownQuestions) {
    const q = document.getElementById(id)
    if (q && q.classList.contains('pending')) continue
    knownQuestions.delete(id)
    if (q && !answeredHere.has(id) && q.querySelector('.outcome-answered')) toast('A question was answered elsewhere')
  }
}
function newQuestions () {
  settledQuestions()
  for (const q of document.querySelectorAll('#thread .question.pending')) {
    if (knownQuestions.has(q.id)) continue
    knownQuestions.add(q.id)
    const text = q.querySelector('.body')?.innerText || 'a question'
    announce(`The agent asks: ${text.trim()}`)
    if (free()) q.querySelector('input:not([type=hidden]), select, textarea, button')?.focus({ preventScroll: true })
  }
}
// After a send (by the Send button too), the focus is back in the message box, unless a
// question has taken it.
document.addEventListener('datastar-fetch', (e) => {
  const { type, el } = e.detail || {}
  if (type === 'finished' && el && el.id === 'composer' && !document.querySelector('#thread .question.pending:focus-within')) {
    document.getElementById('message')?.focus({ preventScroll: true })
  }
})

let pending = false
new MutationObserver(() => {
  if (pending) return
  pending = true
  queueMicrotask(() => {
    pending = false
    showTimes(document)
    syncWaiting()
    newQuestions()
  })
}).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-waiting', 'datetime'] })
showTimes(document)
syncWaiting()

// Menus and popovers (the account menu, a conversation's Manage, the plan): Escape closes
// the open one, giving its button the focus back if the focus was in it; a click elsewhere
// closes it. An Escape that did something already (the message box's stop) is left alone.
const openMenus = 'details.menu[open], details.conv-menu[open], details.plan[open]'
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || e.defaultPrevented) return
  const open = document.querySelector(openMenus)
  if (!open) return
  const inside = open.contains(document.activeElement)
  open.open = false
  if (inside) open.querySelector('summary')?.focus()
})
document.addEventListener('click', (e) => {
  for (const m of document.querySelectorAll(openMenus)) {
    if (!m.contains(e.target)) m.open = false
  }
})
