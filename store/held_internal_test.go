package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // for the schema's extensions

	"github.com/parley-chat/parley/domain"
)

// openInternal opens a fresh database of the store the tests run against: a SQLite file, or
// with PARLEY_TEST_STORE=postgres a schema of PARLEY_TEST_POSTGRES's database (as storetest,
// which this package's own tests cannot import).
func openInternal(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "parley.db")
	if os.Getenv("PARLEY_TEST_STORE") == "postgres" {
		base := os.Getenv("PARLEY_TEST_POSTGRES")
		if base == "" {
			t.Skip("no PostgreSQL: set PARLEY_TEST_POSTGRES")
		}
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatal(err)
		}
		_, err = admin.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS citext SCHEMA public; CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public`)
		admin.Close()
		if err != nil {
			t.Fatal(err)
		}
		url, drop, err := NewSchema(ctx, base, "t_")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop)
		path = url
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// aRun starts a conversation with a run and returns both.
func aRun(t *testing.T, db *DB) (convID, runID int64) {
	t.Helper()
	ctx := context.Background()
	c, err := db.CreateConversation(ctx, 0, "tester", "t", "")
	if err != nil {
		t.Fatal(err)
	}
	sent, err := db.StartRun(ctx, c.ID, domain.Message{Text: "hello", Author: "you"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.read.QueryRowContext(ctx, `SELECT run_id FROM steps WHERE id = ?`, sent.Step).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	return c.ID, runID
}

func runState(t *testing.T, db *DB, runID int64) string {
	t.Helper()
	var s string
	if err := db.read.QueryRowContext(context.Background(), `SELECT state FROM runs WHERE id = ?`, runID).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A write held for later is written before anything the transaction reads next, with the
// event it goes with, or with the COMMIT: the transaction sees its own writes, and they are
// all committed, whichever way each one went.
func TestLater_ReadBackAndCommitted(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	convID, runID := aRun(t, db)
	_, otherRun := aRun(t, db)
	var seen string
	var ev domain.Event
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.later(ctx, `UPDATE runs SET state = ? WHERE id = ?`, "held-then-read", runID); err != nil {
			return err
		}
		// A read: what is held is written first.
		if err := tx.QueryRowContext(ctx, `SELECT state FROM runs WHERE id = ?`, runID).Scan(&seen); err != nil {
			return err
		}
		// Two writes of one statement, then an event: the first goes before the second
		// (one statement may not write one row twice), the second with the event.
		if err := tx.later(ctx, `UPDATE runs SET state = ? WHERE id = ?`, "first", runID); err != nil {
			return err
		}
		if err := tx.later(ctx, `UPDATE runs SET state = ? WHERE id = ?`, "second", runID); err != nil {
			return err
		}
		var err error
		if ev, err = db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, RunID: runID, Kind: domain.EventRunState, State: "second"}); err != nil {
			return err
		}
		// Held to the end: it goes with the COMMIT (empty text is text, not NULL).
		return tx.later(ctx, `UPDATE runs SET state = ? || ? WHERE id = ?`, "at-commit", "", otherRun)
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != "held-then-read" {
		t.Errorf("the transaction read its held write as %q; want it written before the read", seen)
	}
	if got := runState(t, db, runID); got != "second" {
		t.Errorf("run state %q after two held writes; want the second", got)
	}
	if got := runState(t, db, otherRun); got != "at-commit" {
		t.Errorf("the write held to the end: state %q; want it committed", got)
	}
	if evs, err := db.Events(ctx, convID, ev.ID-1); err != nil || len(evs) != 1 || evs[0].ID != ev.ID {
		t.Errorf("the event the held write went with: %v, %v", evs, err)
	}
}

// A held write that fails fails its transaction, with its own error, wherever it was sent:
// nothing of the transaction is committed, and the connection serves the next one.
func TestLater_FailureFailsTheTransaction(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	convID, runID := aRun(t, db)
	// A run of no conversation breaks the runs' foreign key.
	const bad = `UPDATE runs SET conversation_id = ? WHERE id = ?`
	for _, where := range []string{"before a read", "with an event", "with the commit"} {
		t.Run(where, func(t *testing.T) {
			before := runState(t, db, runID)
			err := db.tx(ctx, func(tx *Tx) error {
				if err := tx.later(ctx, `UPDATE runs SET state = ? WHERE id = ?`, "lost", runID); err != nil {
					return err
				}
				if err := tx.later(ctx, bad, 1<<40, runID); err != nil {
					return err
				}
				switch where {
				case "before a read":
					var n int
					return tx.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&n)
				case "with an event":
					_, err := db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, RunID: runID, Kind: domain.EventRunState, State: "lost"})
					return err
				}
				return nil
			})
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "foreign key") {
				t.Fatalf("error %v; want the held write's foreign key failure", err)
			}
			if got := runState(t, db, runID); got != before {
				t.Errorf("run state %q after the failed transaction; want %q, nothing of it committed", got, before)
			}
			// The pool's connections (one of which ran the failed transaction) serve the next.
			for range 20 {
				if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: convID, Kind: domain.EventRunState, State: domain.RunState(before)}); err != nil {
					t.Fatalf("a transaction after the failure: %v", err)
				}
			}
		})
	}
}

// A step ended before it began (its start failed) ends its run: the step is not one of the
// steps queued behind it.
func TestFinishStep_OfAQueuedStep(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	c, err := db.CreateConversation(ctx, 0, "tester", "t", "")
	if err != nil {
		t.Fatal(err)
	}
	sent, err := db.StartRun(ctx, c.ID, domain.Message{Text: "hello", Author: "you"})
	if err != nil {
		t.Fatal(err)
	}
	var runID int64
	if err := db.read.QueryRowContext(ctx, `SELECT run_id FROM steps WHERE id = ?`, sent.Step).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishStep(ctx, sent.Step, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := runState(t, db, runID); got != string(domain.StateDone) {
		t.Errorf("run state %q after its only step ended; want done", got)
	}
}
