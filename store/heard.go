package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
)

// What the listener does with the events a notification tells of: reads them (or takes this
// instance's own from memory) and hands each conversation's to the observer in order, once.

// ownEvents are the events this instance's transactions committed, by the word of their
// notification (conversation:first:last), until the listener hears it: it hands them over
// as they are, without reading them back.
type ownEvents struct {
	mu  sync.Mutex
	evs map[string][]domain.Event
}

// keep holds a transaction's runs of events (see eventRuns) by their names, before it commits.
func (o *ownEvents) keep(names []string, runs [][]domain.Event) {
	if len(names) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.evs == nil {
		o.evs = map[string][]domain.Event{}
	}
	for i, name := range names {
		o.evs[name] = runs[i]
	}
}

// drop forgets the runs of names (their transaction did not commit).
func (o *ownEvents) drop(keys []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range keys {
		delete(o.evs, k)
	}
}

// take returns and forgets the events of a notification's word, nil when they are not
// this instance's.
func (o *ownEvents) take(key string) []domain.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	evs := o.evs[key]
	delete(o.evs, key)
	return evs
}

// clear forgets them all: the log is read instead.
func (o *ownEvents) clear() {
	o.mu.Lock()
	defer o.mu.Unlock()
	clear(o.evs)
}

// heardLog is how far the listener has handed each conversation's events to the observer,
// for the conversations with events lately.
type heardLog struct {
	upTo map[int64]heardUpTo
	// since is when the listener last knew it had heard everything: a read of what is recent
	// starts a while before it. pruned is when forget last ran.
	since, pruned time.Time
}

type heardUpTo struct {
	id int64
	at time.Time
}

// catchUp hands the observer the events the words e<conversation>:<first>:<last> name, and
// any of those conversations' it lacks before them, in one query: each conversation's after
// the last the observer had (from its word's first when the listener knows nothing of it),
// up to its last.
func (db *DB) catchUp(ctx context.Context, words []string) error {
	type span struct{ after, upTo int64 }
	spans := map[int64]span{}
	var convs []any
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, w := range words {
		var conv, first, last int64
		if _, err := fmt.Sscanf(w, "e%d:%d:%d", &conv, &first, &last); err != nil {
			continue
		}
		// This instance's own, right after what the observer had of the conversation, and
		// with none of the conversation's before it left to read: handed over as they are.
		if own := db.own.take(w[1:]); own != nil {
			_, read := spans[conv]
			if h, known := db.heardLog.upTo[conv]; !read && (!known || h.id >= first-1) {
				db.observeHeard(own)
				continue
			}
		}
		sp, ok := spans[conv]
		if !ok {
			sp.after = first - 1
			if h, known := db.heardLog.upTo[conv]; known {
				sp.after = h.id
			}
			convs = append(convs, conv)
		}
		sp.upTo = max(sp.upTo, last)
		spans[conv] = sp
	}
	for _, sp := range spans {
		if sp.upTo > sp.after {
			lo, hi = min(lo, sp.after), max(hi, sp.upTo)
		}
	}
	if hi == 0 {
		return nil
	}
	for len(convs) > 0 {
		n := min(len(convs), 500)
		rows, err := db.read.QueryContext(ctx, `SELECT e.id, e.conversation_id, coalesce(e.run_id, 0), e.kind, e.payload, e.created_at, e.version
			FROM events e WHERE e.conversation_id IN (?`+strings.Repeat(", ?", n-1)+`) AND e.id > ? AND e.id <= ? ORDER BY e.conversation_id, e.id`,
			append(convs[:n:n], lo, hi)...)
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		evs, err := scanEvents(rows)
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		db.observeHeard(slices.DeleteFunc(evs, func(ev domain.Event) bool {
			sp := spans[ev.ConversationID]
			return ev.ID <= sp.after || ev.ID > sp.upTo
		}))
		convs = convs[n:]
	}
	return nil
}

// observeHeard hands events read from the log to the observer, each conversation's in the
// order of their ids, but for those it had.
func (db *DB) observeHeard(evs []domain.Event) {
	if db.heardLog.upTo == nil {
		db.heardLog.upTo = map[int64]heardUpTo{}
	}
	now := time.Now()
	kept := evs[:0]
	for _, ev := range evs {
		if h, ok := db.heardLog.upTo[ev.ConversationID]; ok && ev.ID <= h.id {
			continue
		}
		db.heardLog.upTo[ev.ConversationID] = heardUpTo{ev.ID, now}
		kept = append(kept, ev)
	}
	if len(kept) == 0 {
		return
	}
	db.obsMu.Lock()
	observe := db.observe
	db.obsMu.Unlock()
	if observe != nil {
		observe(kept)
	}
}

// recentWindow is how far before the last time the listener knew it had heard everything a
// read of what is recent begins: longer than any write transaction lasts, so that events
// stamped before it began and committed after are in it.
const recentWindow = 2 * time.Minute

// readRecent reads the events written lately, after a reconnection or a quiet while, and
// hands the observer those it had not had.
func (db *DB) readRecent(ctx context.Context) error {
	db.own.clear()
	started := time.Now()
	since := db.heardLog.since
	if since.IsZero() {
		since = started
	}
	for after := int64(0); ; {
		rows, err := db.read.QueryContext(ctx, `SELECT e.id, e.conversation_id, coalesce(e.run_id, 0), e.kind, e.payload, e.created_at, e.version
			FROM events e WHERE e.created_at >= ? AND e.id > ? ORDER BY e.id LIMIT 512`, formatTime(since.Add(-recentWindow)), after)
		if err != nil {
			return fmt.Errorf("read recent events: %w", err)
		}
		evs, err := scanEvents(rows)
		if err != nil {
			return fmt.Errorf("read recent events: %w", err)
		}
		if len(evs) == 0 {
			break
		}
		after = evs[len(evs)-1].ID
		slices.SortStableFunc(evs, func(a, b domain.Event) int { return cmp.Compare(a.ConversationID, b.ConversationID) })
		db.observeHeard(evs)
		if len(evs) < 512 {
			break
		}
	}
	db.heardLog.since = started
	db.heardLog.forget(started)
	return nil
}

// forget drops, every so often, the conversations with no events for twice the window: a
// notification of theirs is read from its own first event, and a read of what is recent
// (which starts a window back) hands nothing of theirs twice, whatever the writers' clocks
// are off by within the window.
func (h *heardLog) forget(now time.Time) {
	if now.Sub(h.pruned) < quietCheck {
		return
	}
	h.pruned = now
	for conv, u := range h.upTo {
		if now.Sub(u.at) > 2*recentWindow {
			delete(h.upTo, conv)
		}
	}
}
