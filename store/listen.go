package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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

// notify adds a word to the notification the transaction sends when it commits.
func (tx *Tx) notify(word string) { tx.notes = append(tx.notes, word) }

// notification is what the transaction tells the other instances as it commits: the runs of
// events it wrote (see eventRuns), its draft batch and its words; "" when nothing.
func (tx *Tx) notification(runs []string) string {
	var b strings.Builder
	for _, run := range runs {
		b.WriteString("e" + run + " ")
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

// eventRuns cuts a transaction's events into runs of one conversation's, each with its name in
// the notification (conversation:first:last).
func eventRuns(evs []domain.Event) (names []string, runs [][]domain.Event) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].ConversationID == evs[i].ConversationID {
			j++
		}
		names = append(names, fmt.Sprintf("%d:%d:%d", evs[i].ConversationID, evs[i].ID, evs[j-1].ID))
		runs = append(runs, evs[i:j:j])
		i = j
	}
	return names, runs
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

// WrittenElsewhere is the message another instance is writing in the conversation, whole
// as its drafts stored so far hold it (At 0), for an instance that follows it from the
// middle; ok is false when none is (and always on SQLite: one instance writes). Drafts
// outlive their message (a batch goes once none of its messages is open): only the newest
// message of a run whose step another instance has started counts, and only while no
// finished form of it is in the log.
func (db *DB) WrittenElsewhere(ctx context.Context, convID int64) (d domain.Draft, ok bool, err error) {
	if !db.pg {
		return d, false, nil
	}
	var run int64
	err = db.read.QueryRowContext(ctx, `SELECT s.run_id FROM steps s JOIN runs r ON r.id = s.run_id
		WHERE r.conversation_id = ? AND s.state = 'started' AND s.owner <> ? ORDER BY s.id DESC LIMIT 1`, convID, db.instance).Scan(&run)
	if err == sql.ErrNoRows {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("text written elsewhere: %w", err)
	}
	// Batches hold every conversation's text: those of this one are found by its key.
	msgs, err := readDrafts(ctx, db.read, `owner <> ? AND strpos(drafts, ?) > 0`, db.instance, `{"c":`+strconv.FormatInt(convID, 10)+`,`)
	if err != nil {
		return d, false, fmt.Errorf("text written elsewhere: %w", err)
	}
	var last *domain.Event
	for i, m := range msgs[convID] { // ordered as made
		if m.RunID == run {
			last = &msgs[convID][i]
		}
	}
	if last == nil {
		return d, false, nil
	}
	var ended bool
	err = db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE conversation_id = ? AND run_id = ?
		AND kind = ? AND json_extract(payload, '$.message_id') = ?)`, convID, run, string(domain.EventAgentMessage), last.MessageID).Scan(&ended)
	if err != nil || ended {
		return d, false, err
	}
	return domain.Draft{ConversationID: convID, RunID: run, MessageID: last.MessageID, Author: last.Author, Text: last.Text}, true, nil
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
