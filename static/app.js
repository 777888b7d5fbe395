// Keeps the newest part of the conversation in view while the agent streams,
// unless the person has scrolled up to read.
const thread = document.getElementById('thread')
if (thread) {
  let follow = true
  addEventListener('scroll', () => {
    follow = innerHeight + scrollY >= document.body.scrollHeight - 120
  }, { passive: true })
  new MutationObserver(() => {
    if (follow) scrollTo({ top: document.body.scrollHeight })
  }).observe(thread, { childList: true, subtree: true, characterData: true })
}

// A message being written grows by "datastar" events (see views/markdown_stream.go and
// web/sse.go): finished blocks of Markdown arrive rendered, once, and are never touched again;
// the open block, the last one, has the middle of its HTML replaced, or plain text appended at
// its caret. The HTML was sanitized on the server; appended text goes in as text.
//   s: "K L html": keep the open block's first K and last L characters of HTML, html between
//   a: text to append at the caret
//   f: the open block is finished as it stands
//   b: finished blocks that follow
//   o: a new open block with this HTML (the caret is its <i>)
//   e: the message is finished
const escapeHTML = (t) => t.replace(/[&'<>"]/g, (c) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;' })[c])
document.addEventListener('datastar-fetch', (e) => {
  const { type, argsRaw: a } = e.detail || {}
  if (type !== 'datastar' || !a) return
  const msgs = document.querySelectorAll('#thread .msg.agent.streaming')
  const body = msgs.length && msgs[msgs.length - 1].querySelector('.body')
  if (!body) return
  let open = body.lastElementChild && body.lastElementChild.matches('.md-open') ? body.lastElementChild : null
  if ('s' in a && open) {
    const v = a.s
    const i = v.indexOf(' ')
    const j = v.indexOf(' ', i + 1)
    const html = open.mdHTML
    open.mdHTML = html.slice(0, Number(v.slice(0, i))) + v.slice(j + 1) + html.slice(html.length - Number(v.slice(i + 1, j)))
    open.innerHTML = open.mdHTML
  }
  if ('a' in a && open) {
    // The HTML kept holds the text too, as the server's copy does: the next splice counts on it.
    open.mdHTML = open.mdHTML.replace('<i></i>', () => escapeHTML(a.a) + '<i></i>')
    open.querySelector('i')?.before(a.a)
  }
  if ('f' in a && open) {
    open.querySelector('i')?.remove()
    open.replaceWith(...open.childNodes)
    open = null
  }
  if (a.b) body.insertAdjacentHTML('beforeend', a.b)
  if ('o' in a) {
    open = document.createElement('div')
    open.className = 'md-open'
    open.mdHTML = a.o
    open.innerHTML = a.o
    body.append(open)
  }
  if ('e' in a) body.closest('.msg').classList.remove('streaming')
})

// Attachments: a form with a [data-attach] picker lists the chosen files as chips (each can be
// removed), takes files dropped anywhere on the form, and refuses to send a file above the
// limit, more files than allowed or a message above its limit, saying which, with nothing
// typed lost. The server checks again: the files it refuses are marked, and every file stays
// chosen, so that the person removes the refused ones and picks nothing again.
const fileSize = (n) => n < 1000 ? `${n} B` : n < 1e6 ? `${(n / 1e3).toFixed(1)} KB` : `${(n / 1e6).toFixed(1)} MB`

function attachState (form) {
  const box = form.querySelector('[data-attach]')
  if (!box) return null
  return {
    input: box.querySelector('input[type=file]'),
    list: form.querySelector('.attach-list'),
    text: form.querySelector('textarea[name=text]'),
    maxBytes: Number(box.dataset.maxBytes),
    maxFiles: Number(box.dataset.maxFiles),
    maxText: Number(box.dataset.maxText)
  }
}

function problems (st) {
  const out = []
  const size = st.text ? new Blob([st.text.value]).size : 0
  if (size > st.maxText) out.push(`The message is too long (${fileSize(size)}; at most ${fileSize(st.maxText)}): attach a large text as a file instead.`)
  const files = [...st.input.files]
  if (files.length > st.maxFiles) out.push(`Attach at most ${st.maxFiles} files to one message.`)
  for (const f of files) {
    if (f.size > st.maxBytes) out.push(`${f.name} is ${fileSize(f.size)}; a file can be at most ${fileSize(st.maxBytes)}.`)
    if (f.size === 0) out.push(`${f.name} is empty.`)
  }
  return out
}

function renderAttachments (form) {
  const st = attachState(form)
  if (!st) return
  st.list.replaceChildren(...[...st.input.files].map((f, i) => {
    const li = document.createElement('li')
    li.className = f.size > st.maxBytes || f.size === 0 || refused.has(f) ? 'bad' : ''
    li.append(`📎 ${f.name} · ${fileSize(f.size)}${refused.has(f) ? ' · refused' : ''}`)
    const rm = document.createElement('button')
    rm.type = 'button'
    rm.textContent = '×'
    rm.setAttribute('aria-label', `Remove ${f.name}`)
    rm.addEventListener('click', () => {
      const dt = new DataTransfer()
      ;[...st.input.files].forEach((g, j) => { if (j !== i) dt.items.add(g) })
      st.input.files = dt.files
      renderAttachments(form)
    })
    li.append(rm)
    return li
  }))
  const err = form.querySelector('.error[role=alert]')
  const p = problems(st)
  if (err && (p.length || err.dataset.attachError)) {
    err.textContent = p.join(' ')
    err.dataset.attachError = p.length ? '1' : ''
  }
}

// refused holds the chosen files the server refused: its error names each ("x.bin cannot be
// attached: …", "x.txt is empty.").
const refused = new WeakSet()
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
function markRefused (form) {
  const st = attachState(form)
  const err = form.querySelector('.error[role=alert]')
  if (!st || !err) return
  for (const f of st.input.files) {
    if (new RegExp(`(^|\\s)${escapeRe(f.name)} (is|cannot) `).test(err.textContent)) refused.add(f)
  }
  renderAttachments(form)
}

// A form that posts by itself (the start page's) is sent by fetch when it carries files, so
// that a refusal leaves the page as it is: the reason is shown and every file stays chosen.
async function sendWithFiles (form) {
  const err = form.querySelector('.error[role=alert]')
  let text
  form.dataset.sending = '1'
  try {
    const res = await fetch(form.action, { method: 'POST', body: new FormData(form) })
    if (res.redirected) {
      location.assign(res.url)
      return
    }
    const body = await res.text()
    text = body.trim()
    if ((res.headers.get('Content-Type') || '').includes('text/html')) {
      const page = new DOMParser().parseFromString(body, 'text/html')
      text = page.querySelector(`form[action="${form.getAttribute('action')}"] .error[role=alert]`)?.textContent.trim()
    }
    text ||= `Not sent (error ${res.status}); try again. What you typed and chose is kept.`
  } catch {
    text = 'Not sent: the connection failed. Try again; what you typed and chose is kept.'
  } finally {
    delete form.dataset.sending
  }
  if (err) {
    err.textContent = text
    err.dataset.attachError = ''
  }
  markRefused(form)
}

function addFiles (form, files) {
  const st = attachState(form)
  if (!st) return
  const dt = new DataTransfer()
  ;[...st.input.files, ...files].forEach((f) => dt.items.add(f))
  st.input.files = dt.files
  renderAttachments(form)
}

document.addEventListener('change', (e) => {
  if (e.target.matches('[data-attach] input[type=file]')) renderAttachments(e.target.form)
})
document.addEventListener('dragover', (e) => {
  const form = e.target.closest && e.target.closest('form')
  if (!form || !attachState(form) || !e.dataTransfer.types.includes('Files')) return
  e.preventDefault()
  form.classList.add('dragging')
})
document.addEventListener('dragleave', (e) => {
  const form = e.target.closest && e.target.closest('form')
  if (form && !form.contains(e.relatedTarget)) form.classList.remove('dragging')
})
document.addEventListener('drop', (e) => {
  const form = e.target.closest && e.target.closest('form')
  if (!form || !attachState(form) || !e.dataTransfer.files.length) return
  e.preventDefault()
  form.classList.remove('dragging')
  addFiles(form, e.dataTransfer.files)
})
// A form with files over the limit is not sent (capture: before Datastar's own handler).
document.addEventListener('submit', (e) => {
  const form = e.target
  const st = attachState(form)
  if (!st) return
  const p = problems(st)
  if (p.length || form.dataset.sending) {
    e.preventDefault()
    e.stopImmediatePropagation()
    renderAttachments(form)
  } else if (st.input.files.length && form.method === 'post' && !form.hasAttribute('data-on:submit')) {
    e.preventDefault()
    sendWithFiles(form)
  }
}, true)
// After Datastar sent a form with files, the files its error names are marked as refused.
document.addEventListener('datastar-fetch', (e) => {
  const { type, el } = e.detail || {}
  if (type === 'finished' && el instanceof HTMLFormElement && attachState(el)) markRefused(el)
})

// Refusals of Datastar's requests are said, not swallowed, and what was typed stays:
// 401 (the session ended), 403 (not allowed here), 429 (too fast, or too many pages open).
// A refused stream stops retrying: its element goes, and the page says why.
function notice (text) {
  let box = document.querySelector('.app-notice')
  if (!box) {
    box = document.createElement('div')
    box.className = 'app-notice'
    box.setAttribute('role', 'alert')
    document.body.append(box)
  }
  box.textContent = text
}

document.addEventListener('datastar-fetch', (e) => {
  const { type, el, argsRaw } = e.detail || {}
  if (type !== 'error' || !argsRaw) return
  const status = Number(argsRaw.status)
  const stream = el && el.id === 'stream'
  if (status === 401 && stream) {
    location.href = '/login?next=' + encodeURIComponent(location.pathname)
    return
  }
  let text
  if (status === 401) text = 'Your session has ended: sign in again (in another tab), then send again. What you typed is kept.'
  else if (status === 403) text = 'Refused: you may not do that here.'
  else if (status === 429 && stream) text = 'Too many Parley pages are open: close some, then reload this one.'
  else if (status === 404 && stream) text = 'This conversation is not there any more: it was deleted.'
  else if (status === 429) text = 'You are sending too fast: wait a few seconds, then send again. What you typed is kept.'
  else return
  // After Datastar has scheduled its retry: the removal's cleanup then cancels it.
  if (stream) setTimeout(() => el.remove())
  const own = el && el.closest && el.closest('#composer') && document.getElementById('composer-error')
  if (own) own.textContent = text
  else notice(text)
})

// ---- The shell: sidebar, theme, times, the waiting count, copying, focus and announcements.

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
    b.textContent = notifyOn() ? 'Turn off notifications' : 'Turn on notifications'
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
  b.textContent = said
  b.setAttribute('aria-label', said)
  b.classList.add('done')
  setTimeout(() => { b.textContent = 'Copy'; b.setAttribute('aria-label', label); b.classList.remove('done') }, 1500)
})

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
    const t = document.createElement('time')
    t.setAttribute('datetime', new Date().toISOString())
    t.dataset.time = 'short'
    who.querySelector('.author')?.after(t)
    showTime(t)
  }
  announce(`${msg.querySelector('.author')?.textContent || 'The agent'}: ${spoken(msg.querySelector('.body'))}`)
  if (free() && !document.querySelector('#thread .question.pending')) document.getElementById('message')?.focus({ preventScroll: true })
})
const knownQuestions = new Set([...document.querySelectorAll('#thread .question.pending')].map((q) => q.id))
function newQuestions () {
  for (const q of document.querySelectorAll('#thread .question.pending')) {
    if (knownQuestions.has(q.id)) continue
    knownQuestions.add(q.id)
    const text = q.querySelector('.body')?.innerText || 'a question'
    announce(`The agent asks: ${text.trim()}`)
    if (free()) q.querySelector('input:not([type=hidden]), select, textarea, button')?.focus({ preventScroll: true })
  }
}
// After Send the composer is patched anew: the message box keeps the focus.
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
