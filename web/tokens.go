package web

import (
	"context"
	"sync"
)

// tokenStreams holds the cancel functions of the API streams opened with each access token,
// so that revoking a token ends its streams at once, not at their next identity check.
type tokenStreams struct {
	mu   sync.Mutex
	next int
	open map[int64]map[int]context.CancelFunc
}

// add registers a stream of token id; the returned function unregisters it.
func (t *tokenStreams) add(id int64, cancel context.CancelFunc) (remove func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open == nil {
		t.open = map[int64]map[int]context.CancelFunc{}
	}
	if t.open[id] == nil {
		t.open[id] = map[int]context.CancelFunc{}
	}
	t.next++
	n := t.next
	t.open[id][n] = cancel
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.open[id], n)
		if len(t.open[id]) == 0 {
			delete(t.open, id)
		}
	}
}

// end ends every open stream of token id.
func (t *tokenStreams) end(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, cancel := range t.open[id] {
		cancel()
	}
}

// tokenRevoked ends the open streams of a token just revoked in this process. (A token
// revoked by `parley token revoke` is refused from its next request on, and its streams
// end at their next identity check, within a heartbeat.)
func (s *Server) tokenRevoked(id int64) { s.tokens.end(id) }
