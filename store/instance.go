package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/parley-chat/parley/domain"
)

// Lease is how long an instance's work stays its own without a renewal (DB.Lease's default):
// past it, another instance takes the work over. An instance renews every third of it.
const Lease = 15 * time.Second

// newInstance names this process among the instances serving the database: host and pid for
// people, and a random part so that a name is never used twice.
func newInstance() (id, name string) {
	b := make([]byte, 6)
	rand.Read(b)
	host, _ := os.Hostname()
	return hex.EncodeToString(b), fmt.Sprintf("%s pid %d", host, os.Getpid())
}

// Instance is the id this process's steps and drafts carry as their owner.
func (db *DB) Instance() string { return db.instance }

// RenewEvery is how often a server renews its lease (domain.Ledger): on PostgreSQL a third of
// the lease; never on SQLite, where one process holds the database.
func (db *DB) RenewEvery() time.Duration {
	if !db.pg {
		return 0
	}
	return db.Lease / 3
}

// Recover registers this process as an instance serving the database and takes over the
// work of instances gone: on SQLite every other (one process holds the file), on PostgreSQL
// those whose lease ran out. Their started steps are interrupted (their drafts become their
// partial messages), and their queued steps come back, oldest first, to run here.
func (db *DB) Recover(ctx context.Context) ([]domain.QueuedStep, error) {
	var t domain.Takeover
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "takeover"); err != nil {
			return err
		}
		now := formatTime(db.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO instances (id, name, started_at, seen_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, db.instance, db.instanceName, now, now); err != nil {
			return fmt.Errorf("register instance: %w", err)
		}
		if db.pg {
			if _, err := tx.ExecContext(ctx, `UPDATE instances SET expires_at = now() + make_interval(secs => ?) WHERE id = ?`,
				db.Lease.Seconds(), db.instance); err != nil {
				return fmt.Errorf("register instance: %w", err)
			}
		}
		db.registered = true
		var err error
		t, err = db.takeOver(ctx, tx, true)
		return err
	})
	return t.Queued, err
}

// Renew renews this instance's lease: one statement on a connection of its own, so that
// no write under way, of this instance or another, and no wait for a pooled connection
// delays it. The lease it returns holds until Until by this process's clock: the moment the
// statement was sent plus the lease, no later than the database's clock ends it, which is
// the clock the others judge it by. An instance finds its own row gone when it was taken
// for gone: it registers again and reports Lost. Only PostgreSQL is renewed (see
// RenewEvery).
func (db *DB) Renew(ctx context.Context) (domain.Lease, error) {
	var l domain.Lease
	if !db.pg {
		return l, nil
	}
	db.leaseMu.Lock()
	defer db.leaseMu.Unlock()
	if db.leaseConn == nil || db.leaseConn.IsClosed() {
		conn, err := pgx.ConnectConfig(ctx, db.pgConfig)
		if err != nil {
			return l, fmt.Errorf("renew: %w", err)
		}
		db.leaseConn = conn
	}
	sent, now := time.Now(), formatTime(db.Now())
	tag, err := db.leaseConn.Exec(ctx, `UPDATE instances SET seen_at = $1, expires_at = now() + make_interval(secs => $2) WHERE id = $3`,
		now, db.Lease.Seconds(), db.instance)
	if err == nil && tag.RowsAffected() == 0 {
		l.Lost = true
		_, err = db.leaseConn.Exec(ctx, `INSERT INTO instances (id, name, started_at, seen_at, expires_at)
			VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`, db.instance, db.instanceName, now, now, db.Lease.Seconds())
	}
	if err != nil {
		db.leaseConn.Close(context.WithoutCancel(ctx))
		db.leaseConn = nil
		return l, fmt.Errorf("renew: %w", err)
	}
	l.Until = sent.Add(db.Lease)
	return l, nil
}

// TakeOver takes over the work of instances whose lease ran out (see Recover). An instance
// judges the others only when its own renewals went on without a gap (RenewedSince): after a
// stall of its own (the database down a while, say), everyone's lease looks run out, and it
// waits a round for the others to renew theirs. Two instances taking over at once take
// turns.
func (db *DB) TakeOver(ctx context.Context) (domain.Takeover, error) {
	var t domain.Takeover
	if !db.pg {
		return t, nil
	}
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "takeover"); err != nil {
			return err
		}
		var err error
		t, err = db.takeOver(ctx, tx, false)
		return err
	})
	return t, err
}

// resign ends this instance's lease as it closes: what it leaves queued goes to another at
// once, not after the lease.
func (db *DB) resign(ctx context.Context) {
	if !db.registered {
		return
	}
	db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM instances WHERE id = ?`, db.instance)
		return err
	})
	db.leaseMu.Lock()
	if db.leaseConn != nil {
		db.leaseConn.Close(ctx)
		db.leaseConn = nil
	}
	db.leaseMu.Unlock()
}

// takeOver takes the work of instances gone: it drops the instances whose lease ran out (on
// SQLite every other), then interrupts the steps left started by an owner no instance is,
// gives this instance the queued ones, and deletes their drafts. At the start (recover),
// this instance's own work so far counts as left too, as everything did before instances.
func (db *DB) takeOver(ctx context.Context, tx *Tx, recover bool) (domain.Takeover, error) {
	var t domain.Takeover
	// On SQLite no other process serves the file: every other instance is gone.
	expired := `DELETE FROM instances WHERE id <> ?`
	if db.pg {
		expired += ` AND expires_at < now()`
	}
	if _, err := tx.ExecContext(ctx, expired, db.instance); err != nil {
		return t, fmt.Errorf("take over: %w", err)
	}
	if db.pg {
		if _, err := tx.ExecContext(ctx, `DELETE FROM open_streams WHERE owner NOT IN (SELECT id FROM instances) AND owner <> ?`, db.instance); err != nil {
			return t, fmt.Errorf("take over: %w", err)
		}
	}
	// gone is the condition that an owner is no instance (or, at the start, this one).
	gone := func(owner string) string {
		if recover {
			return `(` + owner + ` NOT IN (SELECT id FROM instances) OR ` + owner + ` = '` + db.instance + `')`
		}
		return owner + ` NOT IN (SELECT id FROM instances)`
	}
	started, err := ownedSteps(ctx, tx, `s.state = 'started' AND `+gone(`s.owner`))
	if err != nil {
		return t, err
	}
	if len(started) > 0 {
		lost, err := readDrafts(ctx, tx, gone(`owner`))
		if err != nil {
			return t, err
		}
		for _, s := range started {
			if err := db.interruptStep(ctx, tx, s.ID, nil, lost); err != nil {
				return t, err
			}
			t.Interrupted = append(t.Interrupted, s.ConversationID)
		}
	}
	// What is left belongs to messages that were finished (a batch stored just after).
	if _, err := tx.ExecContext(ctx, `DELETE FROM draft_batches WHERE `+gone(`owner`)); err != nil {
		return t, fmt.Errorf("drafts: %w", err)
	}
	if t.Queued, err = ownedSteps(ctx, tx, `s.state = 'queued' AND `+gone(`s.owner`)); err != nil {
		return t, err
	}
	// Only those still queued: one begun meanwhile (its BeginStep committing as this reads)
	// is its instance's, which is alive.
	queued := t.Queued[:0]
	for _, s := range t.Queued {
		res, err := tx.ExecContext(ctx, `UPDATE steps SET owner = ? WHERE id = ? AND state = 'queued'`, db.instance, s.ID)
		if err != nil {
			return t, fmt.Errorf("take over: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			queued = append(queued, s)
		}
	}
	t.Queued = queued
	return t, nil
}

// ownedSteps are the steps the condition selects, with their conversations, oldest first.
func ownedSteps(ctx context.Context, tx *Tx, where string) ([]domain.QueuedStep, error) {
	rows, err := tx.QueryContext(ctx, `SELECT s.id, r.conversation_id FROM steps s JOIN runs r ON r.id = s.run_id WHERE `+where+` ORDER BY s.id`)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	defer rows.Close()
	var out []domain.QueuedStep
	for rows.Next() {
		var q domain.QueuedStep
		if err := rows.Scan(&q.ID, &q.ConversationID); err != nil {
			return nil, fmt.Errorf("steps: %w", err)
		}
		out = append(out, q)
	}
	return out, rows.Err()
}
