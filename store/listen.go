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
// channel per schema, in commit order (writes commit one at a time, see writeLock):
//
//	e<id>  a transaction committed events up to id: read them and hand them to the observer
//	d<id>  an instance saved the draft batch id: the text its steps are writing
//	c<id>:<account>  conversation id (the account's) was renamed or archived
//	g<id>:<account>  conversation id (the account's) was deleted
//	a      something changed who may see what (auth_changes moved)
//
// An instance hears its own notifications too, and takes its own events from them, so that
// the observer sees every event once, in one order, whichever instance wrote it.

// notifyInstances queues a notification that goes out when tx commits.
func (db *DB) notifyInstances(ctx context.Context, tx *sql.Tx, payload string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_notify(?, ?)`, db.channel, payload)
	return err
}

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
	// finished message brings again; a change of access is checked on the next sweep).
	if err := db.heard(ctx, "e"+strconv.FormatInt(maxInt64, 10)); err != nil {
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
			if err := db.heard(ctx, "e"+strconv.FormatInt(maxInt64, 10)); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			if err := db.heard(ctx, n.Payload); err != nil {
				return err
			}
		}
	}
}

// quietCheck is how long the listener waits for a notification before it checks its
// connection.
const quietCheck = 10 * time.Second

const maxInt64 = 1<<63 - 1

// heard acts on one notification.
func (db *DB) heard(ctx context.Context, payload string) error {
	if payload == "" {
		return nil
	}
	first, second, _ := strings.Cut(payload[1:], ":")
	id, _ := strconv.ParseInt(first, 10, 64)
	account, _ := strconv.ParseInt(second, 10, 64)
	switch payload[0] {
	case 'e':
		return db.catchUp(ctx, id)
	case 'd':
		return db.heardDrafts(ctx, id)
	case 'c':
		if r := db.remote(); r.Changed != nil {
			r.Changed(id, account)
		}
	case 'g':
		if r := db.remote(); r.Gone != nil {
			r.Gone(id, account)
		}
	case 'a':
		if fn := db.authChanged(); fn != nil {
			fn()
		}
	}
	return nil
}

// catchUp hands the observer the events committed after the last it had, up to id.
func (db *DB) catchUp(ctx context.Context, upTo int64) error {
	for {
		rows, err := db.read.QueryContext(ctx, `SELECT e.id, e.conversation_id, coalesce(e.run_id, 0), e.kind, e.payload, e.created_at, e.version
			FROM events e WHERE e.id > ? AND e.id <= ? ORDER BY e.id LIMIT 512`, db.heardUpTo, upTo)
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		evs, err := scanEvents(rows)
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		if len(evs) == 0 {
			return nil
		}
		db.heardUpTo = evs[len(evs)-1].ID
		db.obsMu.Lock()
		observe := db.observe
		db.obsMu.Unlock()
		if observe != nil {
			observe(evs)
		}
		if len(evs) < 512 {
			return nil
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
