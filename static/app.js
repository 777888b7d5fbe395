// A request that failed says so in its status (an invalid answer 422, a question resolved
// before 409) and carries in its body the patches that show why. Datastar v1.0 applies no
// patch from a response that is not a 200 (it reads the body only then), so such a response
// to a Datastar request is handed to it as a 200: the page shows what the server sent.
// Responses without patches (a plain-text 403, 429) stay as they are, for the notices below.
const fetchFromNetwork = window.fetch.bind(window)
window.fetch = async (input, init) => {
  const res = await fetchFromNetwork(input, init)
  const patches = (res.headers.get('Content-Type') || '').startsWith('text/event-stream')
  if (res.status < 400 || !patches || !init?.headers?.['Datastar-Request']) return res
  return new Response(res.body, { status: 200, headers: res.headers })
}

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
// The dock at the window's foot (plan, what the agent does, the message box) is fixed: the
// conversation keeps room for it at its end, as tall as it is.
const dock = document.querySelector('.dock')
if (dock) {
  new ResizeObserver(() => document.documentElement.style.setProperty('--dock-h', dock.offsetHeight + 'px')).observe(dock)
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
    const caret = open.querySelector('i')
    const prev = caret?.previousSibling
    if (prev && prev.nodeType === Node.TEXT_NODE) prev.appendData(a.a) // one text grows: nothing moves
    else caret?.before(a.a)
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
    li.append(`${f.name} · ${fileSize(f.size)}${refused.has(f) ? ' · refused' : ''}`)
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

// A message sent from the composer: once the server took it (its answer brings a new nonce),
// the box is emptied only if it still holds what was sent, and what was typed after the sent
// text stays; so do files chosen since. A refused message changes no nonce: all stays. While
// one is on its way, Enter sends nothing more (a second request would cancel the first, or
// carry its nonce and be dropped as the same message): what is typed waits in the box.
const sent = new WeakMap() // form → what it sent, while that is on its way
const fileKey = (files) => [...files].map((f) => `${f.name}/${f.size}/${f.lastModified}`).join('|')
document.addEventListener('submit', (e) => {
  const form = e.target
  if (form.id !== 'composer') return
  if (sent.has(form)) {
    e.preventDefault()
    e.stopImmediatePropagation()
    return
  }
  const st = attachState(form)
  sent.set(form, { nonce: form.elements.nonce.value, text: st.text.value, files: fileKey(st.input.files) })
}, true) // capture, after the check above: a form it stops was not sent
document.addEventListener('datastar-fetch', (e) => {
  const { type, el } = e.detail || {}
  if (type !== 'finished' || !(el instanceof HTMLFormElement) || el.id !== 'composer') return
  const was = sent.get(el)
  sent.delete(el)
  if (!was || el.elements.nonce.value === was.nonce) return
  const st = attachState(el)
  const now = st.text.value
  if (now.startsWith(was.text)) st.text.value = now.slice(was.text.length).replace(/^\s+/, '')
  if (fileKey(st.input.files) === was.files) {
    st.input.value = ''
    renderAttachments(el)
  }
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

// The home page: the chosen agent's starter messages show; one fills the message box.
document.addEventListener('change', (e) => {
  const r = e.target
  if (!(r instanceof HTMLInputElement) || r.name !== 'agent' || !r.form?.classList.contains('start-form')) return
  for (const s of r.form.querySelectorAll('.starters')) s.hidden = s.dataset.agent !== r.value
})
document.addEventListener('click', (e) => {
  const b = e.target.closest('button.starter')
  if (!b) return
  const box = b.form?.querySelector('textarea[name=text]')
  if (!box) return
  box.value = b.textContent
  box.focus()
  box.setSelectionRange(box.value.length, box.value.length)
})
