package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-chat/parley/domain"
)

// On PostgreSQL every instance hears what the others commit through one notification
// channel per schema. A transaction sends at most one notification, of one or more of these
// words (PostgreSQL serializes the commits that notify: one a transaction keeps that cheap):
//
//	e<conversation>:<first>:<last>  the transaction committed the conversation's events first to last
//	d<id>  an instance saved the draft batch id: the text its steps are writing
//	c<id>:<account>  conversation id (the account's) was renamed or archived
//	g<id>:<account>  conversation id (the account's) was deleted
//	a      something changed who may see what (auth_changes moved)
//
// Events are ordered within a conversation, not across conversations: a conversation's
// events are written under its lock (see Tx.lockConversation), so its notifications arrive
// in the order of their ids, and the listener hands each conversation's events to the
// observer in that order. What crosses conversations (the sidebars, the Inbox counts, the
// streams a change of access ends) needs no order among them: each is read from the
// database when its notification comes. An instance hears its own notifications too, and
// takes its own events from them, so that the observer sees every event once, in one order
// a conversation, whichever instance wrote it.

// notifyInstances adds a word to the notification the transaction sends when it commits.
func (db *DB) notifyInstances(_ context.Context, tx *Tx, word string) error {
	tx.notes = append(tx.notes, word)
	return nil
}

// notification is what the transaction tells the other instances as it commits: its words,
// the range of events it wrote in each conversation and its draft batch; "" when nothing.
func (tx *Tx) notification() string {
	var b strings.Builder
	for i := 0; i < len(tx.events); {
		conv, first := tx.events[i].ConversationID, tx.events[i].ID
		last := first
		j := i + 1
		for ; j < len(tx.events) && tx.events[j].ConversationID == conv; j++ {
			last = tx.events[j].ID
		}
		fmt.Fprintf(&b, "e%d:%d:%d ", conv, first, last)
		i = j
	}
	if tx.batch != 0 {
		fmt.Fprintf(&b, "d%d ", tx.batch)
	}
	for _, w := range tx.notes {
		b.WriteString(w + " ")
	}
	note := strings.TrimSuffix(b.String(), " ")
	if len(note) > maxNotification {
		// PostgreSQL refuses a payload of 8000 bytes: the listeners read the recent log instead.
		return "r"
	}
	return note
}

// maxNotification is the longest notification sent; a longer one is "r" (read what is recent).
const maxNotification = 7900

// listen follows the channel until ctx ends, connecting again after a failure and reading
// what it missed meanwhile. ready hears the outcome of the first attempt to listen.
func (db *DB) listen(ctx context.Context, cfg *pgx.ConnConfig, ready chan<- error, done chan<- struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		err := db.follow(ctx, cfg, ready)
		ready = nil
		if ctx.Err() != nil {
			return
		}
		slog.Error("listen to the other instances (again in a second)", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// follow listens on one connection until it fails.
func (db *DB) follow(ctx context.Context, cfg *pgx.ConnConfig, ready chan<- error) (err error) {
	defer func() {
		if ready != nil && err != nil {
			ready <- err
		}
	}()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{db.channel}.Sanitize()); err != nil {
		return err
	}
	if ready != nil {
		ready <- nil
		ready = nil
	}
	// What committed while no one listened: the events (drafts are text a later batch or the
	// finished message brings again; a change of access is checked on the next sweep). At
	// the first connection nothing was missed: what came before is in the log.
	if db.heardLog.since.IsZero() {
		db.heardLog.since = time.Now()
	} else if err := db.readRecent(ctx); err != nil {
		return err
	}
	for {
		wait, cancel := context.WithTimeout(ctx, quietCheck)
		n, err := conn.WaitForNotification(wait)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			// Quiet for a while: a connection dropped without a word (a NAT or a load
			// balancer forgetting it) would stay quiet for ever. Ask it, and read what
			// committed meanwhile in case.
			if err := conn.Ping(ctx); err != nil {
				return err
			}
			if err := db.readRecent(ctx); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			// Take every notification already here with it: their events are read together.
			received := time.Now()
			payloads := []string{n.Payload}
			for len(payloads) < maxBatch {
				more, cancel := context.WithTimeout(ctx, time.Millisecond)
				n, err := conn.WaitForNotification(more)
				cancel()
				if err != nil || n == nil {
					break
				}
				payloads = append(payloads, n.Payload)
			}
			if err := db.heard(ctx, strings.Join(payloads, " ")); err != nil {
				return err
			}
			// Every transaction that committed before the first of them was heard: one not
			// heard yet stamped its events after that, but for its own length.
			db.heardLog.since = received
			db.heardLog.forget(received)
		}
	}
}

// maxBatch is how many notifications the listener acts on together at most.
const maxBatch = 256

// quietCheck is how long the listener waits for a notification before it checks its
// connection.
const quietCheck = 10 * time.Second

// heard acts on notifications: each of their words, in order, the events of consecutive
// notifications read together, in one query.
func (db *DB) heard(ctx context.Context, payload string) error {
	words := strings.Fields(payload)
	for i := 0; i < len(words); {
		if words[i][0] != 'e' {
			if err := db.heardWord(ctx, words[i]); err != nil {
				return err
			}
			i++
			continue
		}
		j := i
		for j < len(words) && words[j][0] == 'e' {
			j++
		}
		if err := db.catchUp(ctx, words[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (db *DB) heardWord(ctx context.Context, word string) error {
	parts := strings.Split(word[1:], ":")
	num := func(i int) int64 {
		if i >= len(parts) {
			return 0
		}
		n, _ := strconv.ParseInt(parts[i], 10, 64)
		return n
	}
	switch word[0] {
	case 'r':
		return db.readRecent(ctx)
	case 'd':
		return db.heardDrafts(ctx, num(0))
	case 'c':
		if r := db.remote(); r.Changed != nil {
			r.Changed(num(0), num(1))
		}
	case 'g':
		if r := db.remote(); r.Gone != nil {
			r.Gone(num(0), num(1))
		}
	case 'a':
		if fn := db.authChanged(); fn != nil {
			fn()
		}
	}
	return nil
}

// ownEvents are the events this instance's transactions committed, by the word of their
// notification (conversation:first:last), until the listener hears it: it hands them over
// as they are, without reading them back.
type ownEvents struct {
	mu  sync.Mutex
	evs map[string][]domain.Event
}

// keep holds a transaction's events, before it commits, and returns their keys.
func (o *ownEvents) keep(evs []domain.Event) (keys []string) {
	if len(evs) == 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.evs == nil {
		o.evs = map[string][]domain.Event{}
	}
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].ConversationID == evs[i].ConversationID {
			j++
		}
		key := fmt.Sprintf("%d:%d:%d", evs[i].ConversationID, evs[i].ID, evs[j-1].ID)
		o.evs[key] = evs[i:j:j]
		keys = append(keys, key)
		i = j
	}
	return keys
}

// drop forgets the events of keys (their transaction did not commit).
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

// heardDrafts hands the text of another instance's draft batch to the remote observer.
func (db *DB) heardDrafts(ctx context.Context, id int64) error {
	r := db.remote()
	if r.Drafts == nil {
		return nil
	}
	var owner string
	var b []byte
	err := db.read.QueryRowContext(ctx, `SELECT owner, drafts FROM draft_batches WHERE id = ?`, id).Scan(&owner, &b)
	if err == sql.ErrNoRows || err == nil && owner == db.instance {
		return nil // its messages were finished meanwhile, or the batch is this instance's
	}
	if err != nil {
		return fmt.Errorf("drafts: %w", err)
	}
	var batch []storedDraft
	if err := json.Unmarshal(b, &batch); err != nil {
		return nil
	}
	drafts := make([]domain.Draft, len(batch))
	for i, d := range batch {
		drafts[i] = domain.Draft{ConversationID: d.Conversation, RunID: d.Run, MessageID: d.Message, At: d.At, Author: d.Author, Text: d.Text}
	}
	r.Drafts(drafts)
	return nil
}

// DraftText is the text of a message being written, as the drafts stored so far hold it: for
// an instance that follows a message another writes from the middle.
func (db *DB) DraftText(ctx context.Context, convID int64, msgID string) (string, error) {
	msgs, err := readDrafts(ctx, db.read, `true`)
	if err != nil {
		return "", fmt.Errorf("draft text: %w", err)
	}
	for _, m := range msgs[convID] {
		if m.MessageID == msgID {
			return m.Text, nil
		}
	}
	return "", nil
}

// ObserveRemote sets what the hub hears of the other instances (see domain.Remote).
func (db *DB) ObserveRemote(r domain.Remote) {
	db.obsMu.Lock()
	db.remoteObs = r
	db.obsMu.Unlock()
}

func (db *DB) remote() domain.Remote {
	db.obsMu.Lock()
	defer db.obsMu.Unlock()
	return db.remoteObs
}

// OnAuthChange sets a function called when who may see what changed in any instance or
// command: it runs before any event committed after the change is observed (PostgreSQL: on
// the listener, before the notifications after it; SQLite: in the next write transaction,
// before it commits, and once more after it commits, for the change it made itself), so
// that streams the change ends get nothing more. It is called with
// the writer held: it must return at once, and must not touch the database.
func (db *DB) OnAuthChange(fn func()) {
	db.obsMu.Lock()
	db.onAuth = fn
	db.obsMu.Unlock()
}

func (db *DB) authChanged() func() {
	db.obsMu.Lock()
	defer db.obsMu.Unlock()
	return db.onAuth
}
