package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Shared reports whether several instances may serve the database (PostgreSQL): what one
// instance would count in memory (the limits) is counted here instead.
func (db *DB) Shared() bool { return db.pg }

// TakeToken spends a token of the bucket key under rule b, counted in the database for every
// instance: false and how long until there is one when it is empty.
func (db *DB) TakeToken(ctx context.Context, key string, b domain.Bucket) (ok bool, wait time.Duration, err error) {
	err = db.lightTx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "limit "+key); err != nil {
			return err
		}
		now := db.Now()
		n, err := tokens(ctx, tx, key, b, now)
		if err != nil {
			return err
		}
		n, ok, wait = b.Take(n)
		return saveTokens(ctx, tx, key, b, n, now)
	})
	db.forgetFullBuckets(ctx)
	return ok, wait, err
}

// forgetFullBuckets deletes the buckets full again, once a minute at most, in a statement of
// its own: the takes do not lock each other's rows for it.
func (db *DB) forgetFullBuckets(ctx context.Context) {
	now := db.Now()
	last := db.bucketsSwept.Load()
	if now.UnixNano()-last < int64(time.Minute) || !db.bucketsSwept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	_ = db.exec(ctx, `DELETE FROM rate_limits WHERE full_at < ?`, formatTime(now))
}

// RefundToken gives the bucket key back a token its last take spent.
func (db *DB) RefundToken(ctx context.Context, key string, b domain.Bucket) error {
	return db.lightTx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "limit "+key); err != nil {
			return err
		}
		now := db.Now()
		n, err := tokens(ctx, tx, key, b, now)
		if err != nil {
			return err
		}
		return saveTokens(ctx, tx, key, b, min(n+1, float64(b.Capacity)), now)
	})
}

// ResetTokens fills the bucket key again.
func (db *DB) ResetTokens(ctx context.Context, key string) error {
	return db.exec(ctx, `DELETE FROM rate_limits WHERE key = ?`, key)
}

// tokens is what the bucket key holds at now: full when it has no row.
func tokens(ctx context.Context, tx *Tx, key string, b domain.Bucket, now time.Time) (float64, error) {
	var n float64
	var last string
	err := tx.QueryRowContext(ctx, `SELECT tokens, last FROM rate_limits WHERE key = ?`, key).Scan(&n, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return float64(b.Capacity), nil
	}
	if err != nil {
		return 0, fmt.Errorf("limit %s: %w", key, err)
	}
	return b.Refill(n, parseTime(last), now), nil
}

// saveTokens stores what the bucket key holds, and forgets the buckets full again by now.
func saveTokens(ctx context.Context, tx *Tx, key string, b domain.Bucket, n float64, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO rate_limits (key, tokens, last, full_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, last = excluded.last, full_at = excluded.full_at`,
		key, n, formatTime(now), formatTime(b.FullAt(n, now)))
	if err != nil {
		return fmt.Errorf("limit %s: %w", key, err)
	}
	return nil
}

// OpenStream counts one more open stream of the person, unless max are open already on the
// instances serving the database (PostgreSQL): ok false then. CloseStream takes it back.
func (db *DB) OpenStream(ctx context.Context, userID int64, max int) (id int64, ok bool, err error) {
	err = db.lightTx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "streams "+strconv.FormatInt(userID, 10)); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM open_streams WHERE user_id = ?
			AND (owner = ? OR owner IN (SELECT id FROM instances))`, userID, db.instance).Scan(&n); err != nil {
			return fmt.Errorf("open stream: %w", err)
		}
		if n >= max {
			return nil
		}
		ok = true
		id, err = insertID(ctx, tx, `INSERT INTO open_streams (owner, user_id, opened_at) VALUES (?, ?, ?)`, db.instance, userID, formatTime(db.Now()))
		return err
	})
	return id, ok, err
}

// CloseStream takes back a stream OpenStream counted.
func (db *DB) CloseStream(ctx context.Context, id int64) error {
	return db.exec(ctx, `DELETE FROM open_streams WHERE id = ?`, id)
}
