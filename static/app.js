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
