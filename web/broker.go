package web

import "sync"

// broker wakes the SSE streams of a conversation when its log grows. It carries no data:
// a woken stream reads the new events from the store, so nothing is lost or sent twice.
type broker struct {
	mu   sync.Mutex
	subs map[int64]map[chan struct{}]struct{}
}

func newBroker() *broker { return &broker{subs: map[int64]map[chan struct{}]struct{}{}} }

// subscribe returns a channel that receives a wake-up after each change, and its cancel func.
func (b *broker) subscribe(conversationID int64) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs[conversationID] == nil {
		b.subs[conversationID] = map[chan struct{}]struct{}{}
	}
	b.subs[conversationID][ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs[conversationID], ch)
		if len(b.subs[conversationID]) == 0 {
			delete(b.subs, conversationID)
		}
		b.mu.Unlock()
	}
}

// Notify wakes every stream of the conversation; it never blocks.
func (b *broker) Notify(conversationID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[conversationID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
