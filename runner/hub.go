package runner

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/parley-chat/parley/domain"
)

// Hub carries what happens in conversations to the streams that follow them, the moment it
// happens: each event of the log once it is committed (Publish, which the ledger calls after
// every commit, in commit order) and the text of the message an agent is writing (Write),
// which reaches the log only later, in batches, and whole when the message ends.
//
// A follower reads what it lacks with Since: the events after its cursor from a bounded
// replay buffer, and the message being written from its own offset, so that one that fell
// behind gets everything it missed at once. Writers never wait for followers: waking one is
// a signal that is dropped when one is pending already.
type Hub struct {
	mu    sync.Mutex
	convs map[int64]*liveConversation
	// MaxEvents and MaxBytes bound one conversation's replay buffer.
	maxEvents, maxBytes int
	// deltas counts the pieces of text written (see Deltas).
	deltas atomic.Uint64
	// heard is the last event published of each conversation lately (a conversation's ids
	// grow in commit order; across conversations they need not). The log can be ahead of
	// it, an event being committed before it is published: a follower with events the hub
	// has not heard may have the end of the message being written (see Since).
	heard map[int64]int64
	// onFollow, when set, hears of a conversation that gets its first follower while no
	// message is being written in it here (see OnFollow).
	onFollow func(conversationID int64)
}

// maxHeard bounds Hub.heard: past it the hub forgets what it heard of conversations it does
// not hold, whose followers then wait for its next event before the text being written.
const maxHeard = 1 << 16

// liveConversation is what the hub holds of one conversation while someone follows it or
// an agent writes in it.
type liveConversation struct {
	mu        sync.Mutex
	followers []*Follower
	// events are recent committed events, oldest first; the hub holds every event of the
	// conversation with an id above floor (math.MaxInt64 until a follower read the log).
	events []domain.Event
	bytes  int
	floor  int64
	// dropped is the newest event the buffer let go.
	dropped int64
	open    *liveMessage
	heard   int64          // the last event of the conversation published
	closed  string         // the id of the last message that ended
	gone    bool           // the conversation was deleted
	deltas  *atomic.Uint64 // the hub's count of pieces written
}

type liveMessage struct {
	id, author string
	run        int64 // the run writing it; 0 when not known
	after      int64 // the last event committed before its step began
	text       []byte
}

// NewHub returns an empty hub whose replay buffers keep up to 256 events or 1 MiB of text
// per conversation.
func NewHub() *Hub {
	return &Hub{convs: map[int64]*liveConversation{}, heard: map[int64]int64{}, maxEvents: 256, maxBytes: 1 << 20}
}

// conversation returns the live state of a conversation, creating it if needed; h.mu is held.
func (h *Hub) conversation(id int64) *liveConversation {
	c := h.convs[id]
	if c == nil {
		c = &liveConversation{floor: math.MaxInt64, deltas: &h.deltas, heard: h.heard[id]}
		h.convs[id] = c
	}
	return c
}

// Write appends delta to the message msgID that an agent writes in the conversation. The
// message ends when its finished form (an agent_message event) is published.
func (h *Hub) Write(conversationID int64, msgID, author, delta string) {
	h.Writer(conversationID, msgID, author).Write(delta)
}

// Writer returns where the message msgID of the conversation is written, for an agent that
// writes many pieces of it: each then costs the conversation's lock alone.
func (h *Hub) Writer(conversationID int64, msgID, author string) *LiveWriter {
	return h.RunWriter(conversationID, 0, 0, msgID, author)
}

// RunWriter is Writer for a message of a known run: only the end of that run ends it, not a
// late word of the end of the run before (events can reach the hub after the next run began
// writing, when they come from the database's notifications). after is the last event
// committed before the step that writes it began: a follower gets those events first.
func (h *Hub) RunWriter(conversationID, runID, after int64, msgID, author string) *LiveWriter {
	h.mu.Lock()
	c := h.conversation(conversationID)
	c.mu.Lock()
	h.mu.Unlock()
	m := c.open
	switch {
	case m != nil && m.id == msgID:
	case msgID == c.closed:
		m = &liveMessage{id: msgID} // the message has ended: its writer writes nothing
	default:
		m = &liveMessage{id: msgID, author: author, run: runID, after: after}
		c.open = m
	}
	c.mu.Unlock()
	return &LiveWriter{c: c, m: m}
}

// Deltas is how many pieces of text agents have written into the hub so far (for a model,
// about one a token): the operator's measure of how fast agents write.
func (h *Hub) Deltas() uint64 { return h.deltas.Load() }

// LiveWriter writes one message of a conversation into the hub.
type LiveWriter struct {
	c *liveConversation
	m *liveMessage
}

// Write appends delta to the message, and wakes the followers. Once the message has ended
// (its finished form published), it does nothing.
func (w *LiveWriter) Write(delta string) {
	c := w.c
	c.mu.Lock()
	if c.open == w.m {
		w.m.text = append(w.m.text, delta...)
		c.deltas.Add(1)
		c.wake()
	}
	c.mu.Unlock()
}

// WriteAt writes the part of text, which begins at byte at of the message, that the hub
// does not hold yet, and reports whether text begins after what it holds (a gap: nothing is
// written). Once the message has ended it does nothing.
func (w *LiveWriter) WriteAt(at int, text string) (gap bool) {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(w.m.text)
	switch {
	case c.open != w.m || at+len(text) <= n:
	case at > n:
		return true
	default:
		w.m.text = append(w.m.text, text[n-at:]...)
		c.deltas.Add(1)
		c.wake()
	}
	return false
}

// Followed reports whether a stream follows the conversation.
func (h *Hub) Followed(conversationID int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.convs[conversationID]
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.followers) > 0
}

// Message is the id of the message the writer writes.
func (w *LiveWriter) Message() string { return w.m.id }

// Publish hands the hub committed events, in commit order. Conversations nobody follows and
// nobody writes in are skipped: a follower reads them from the log.
func (h *Hub) Publish(events []domain.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range events {
		if len(h.heard) >= maxHeard {
			clear(h.heard)
		}
		h.heard[ev.ConversationID] = max(h.heard[ev.ConversationID], ev.ID)
		c := h.convs[ev.ConversationID]
		if c == nil {
			continue
		}
		c.mu.Lock()
		c.add(ev, h.maxEvents, h.maxBytes)
		if c.open != nil && (ev.Kind == domain.EventAgentMessage && ev.MessageID == c.open.id ||
			ev.Kind == domain.EventRunState && ev.State != domain.StateRunning && (c.open.run == 0 || c.open.run == ev.RunID)) {
			// The message is finished, or its step ended: its text is in the log now.
			c.closed, c.open = c.open.id, nil
		}
		c.heard = max(c.heard, ev.ID) // with the message it ended closed, before its followers wake
		c.wake()
		if len(c.followers) == 0 && c.open == nil {
			delete(h.convs, ev.ConversationID)
		}
		c.mu.Unlock()
	}
}

// add appends ev to the replay buffer, dropping the oldest events past the bounds. Every
// event committed after the first one added reaches the buffer (the hub holds the
// conversation from then on), so the buffer covers the log from just before it.
func (c *liveConversation) add(ev domain.Event, maxEvents, maxBytes int) {
	if c.floor == math.MaxInt64 {
		c.floor = ev.ID - 1
	}
	c.events = append(c.events, ev)
	c.bytes += eventSize(ev)
	drop := 0
	for len(c.events)-drop > maxEvents || c.bytes > maxBytes && len(c.events)-drop > 1 {
		c.bytes -= eventSize(c.events[drop])
		c.dropped = max(c.dropped, c.events[drop].ID)
		drop++
	}
	if drop > 0 {
		n := copy(c.events, c.events[drop:])
		clear(c.events[n:])
		c.events = c.events[:n]
		c.floor = max(c.floor, c.dropped)
	}
}

// eventSize is what an event costs the replay buffer, roughly.
func eventSize(ev domain.Event) int { return 256 + len(ev.Text) + len(ev.Intent) }

func (c *liveConversation) wake() {
	for _, f := range c.followers {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// Cursor is how far a follower has got: the newest committed event it has, and how much of
// the message being written. Message is the id of that message once the follower has begun
// it; Bytes is how much of its text it has, -1 when that is not known (a reconnect).
type Cursor struct {
	Event   int64
	Message string
	Bytes   int
}

// Update is what a follower lacks, as Since finds it.
type Update struct {
	// Events are the committed events after the cursor, oldest first.
	Events []domain.Event
	// Message is the message being written, if any.
	Message LiveText
}

// LiveText is part of the message an agent is writing: its text from byte From on. From
// is the cursor's Bytes when it is the cursor's message (0 when Bytes is not known), else 0.
type LiveText struct {
	ID, Author string
	From       int
	Text       []byte
	// After is the last event committed before the step writing it began.
	After int64
}

// Follower follows one conversation. Its Wake channel receives a signal after each change;
// Since says what changed.
type Follower struct {
	h    *Hub
	id   int64
	c    *liveConversation
	wake chan struct{}
}

// Follow starts following a conversation; Close ends it. A follower that starts from an
// event the hub does not hold reads the log first (Since says so) and then calls Synced.
func (h *Hub) Follow(conversationID int64) *Follower {
	f := &Follower{h: h, id: conversationID, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	f.c = h.conversation(conversationID)
	f.c.mu.Lock()
	f.c.followers = append(f.c.followers, f)
	first := len(f.c.followers) == 1 && f.c.open == nil
	f.c.mu.Unlock()
	onFollow := h.onFollow
	h.mu.Unlock()
	if first && onFollow != nil {
		onFollow(conversationID)
	}
	return f
}

// OnFollow sets fn to hear of each conversation that gets its first follower while nothing
// is being written in it here: another instance may be writing it (fn must return at once).
// Set it before the hub is used.
func (h *Hub) OnFollow(fn func(conversationID int64)) {
	h.mu.Lock()
	h.onFollow = fn
	h.mu.Unlock()
}

// Wake receives a signal after each change to the conversation.
func (f *Follower) Wake() <-chan struct{} { return f.wake }

// Gone reports whether the conversation was deleted while followed (see Hub.Gone).
func (f *Follower) Gone() bool {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return f.c.gone
}

// Gone tells the conversation's followers it was deleted: they wake, and Gone says so.
func (h *Hub) Gone(conversationID int64) {
	h.mu.Lock()
	c := h.convs[conversationID]
	h.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gone = true
	c.wake()
	c.mu.Unlock()
}

// Close stops following.
func (f *Follower) Close() {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, g := range c.followers {
		if g == f {
			c.followers = append(c.followers[:i], c.followers[i+1:]...)
			break
		}
	}
	if len(c.followers) == 0 && c.open == nil && f.h.convs[f.id] == c {
		delete(f.h.convs, f.id)
	}
}

// Since returns what the follower lacks after cur: events are appended to evs and the
// message's text to text (both reused by the caller to spare allocations). ok is false
// when the hub does not hold every event after cur.Event: read those from the log, then
// call Synced and Since again.
func (f *Follower) Since(cur Cursor, evs []domain.Event, text []byte) (u Update, ok bool) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur.Event < c.floor {
		return Update{Events: evs, Message: LiveText{Text: text}}, false
	}
	// Events are few between two wake-ups: look for the first new one from the end.
	i := len(c.events)
	for i > 0 && c.events[i-1].ID > cur.Event {
		i--
	}
	u.Events = append(evs, c.events[i:]...)
	u.Message.Text = text
	// A cursor past the events the hub has heard comes from the log (a page drawn from it, a
	// catch-up that read it), which can already hold the end of the message still open
	// here: its text waits until the hub hears that far. Events up to the message's after
	// were committed before it began, and did not end it.
	if m := c.open; m != nil && cur.Event <= max(c.heard, m.after) {
		u.Message.ID, u.Message.Author, u.Message.After = m.id, m.author, m.after
		if m.id == cur.Message && cur.Bytes > 0 && cur.Bytes <= len(m.text) {
			u.Message.From = cur.Bytes
		}
		u.Message.Text = append(text, m.text[u.Message.From:]...)
	}
	return u, true
}

// Synced tells the hub the follower read the log up to event upTo after it began
// following: every later event has reached the hub since, so the replay buffer serves
// everyone from there on (but for what it dropped).
func (f *Follower) Synced(upTo int64) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.floor = max(min(c.floor, upTo), c.dropped)
}
