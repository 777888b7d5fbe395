package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/parley-chat/parley/domain"
)

// ProbeEvery is how long the outcome of a write stands for the database's health (the
// default of DB.ProbeEvery).
const ProbeEvery = 5 * time.Second

// writeHealth is the outcome of the latest writes: when one last committed, and when and how
// one last failed for want of storage.
type writeHealth struct {
	ok    atomic.Int64 // unix nanoseconds of the last commit
	fail  atomic.Pointer[writeFailure]
	probe sync.Mutex
	// damage: SQLite found the file damaged (see noteDamage); it stands until a restart.
	damage atomic.Pointer[writeFailure]
}

type writeFailure struct {
	at  int64
	err error
}

// storageError turns a failure of the storage under SQLite (a full disk, an I/O error, a
// read-only file, a damaged one) into an EUNAVAILABLE error a person can read, keeping the cause. Any other
// error is returned as it is.
func storageError(err error) error {
	if cause, ok := pgUnavailable(err); ok {
		return &storageFailure{msg: domain.Errorf(domain.EUNAVAILABLE,
			"Parley cannot save to its database right now (%s). Nothing saved before is lost; try again in a moment.", cause), cause: err}
	}
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return err
	}
	if damaged(err) {
		return &storageFailure{msg: damageMessage(err), cause: err}
	}
	switch se.Code {
	case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrReadonly, sqlite3.ErrCantOpen:
	default:
		return err
	}
	return &storageFailure{msg: domain.Errorf(domain.EUNAVAILABLE,
		"Parley cannot save to its database right now (%s). Nothing saved before is lost; try again in a moment.", se.Code.Error()), cause: err}
}

// storageFailure reads as its message for a person and unwraps to it and to SQLite's error.
type storageFailure struct {
	msg   *domain.Error
	cause error
}

func (e *storageFailure) Error() string   { return e.msg.Message }
func (e *storageFailure) Unwrap() []error { return []error{e.msg, e.cause} }

// noteWrite records the outcome of a write transaction.
func (db *DB) noteWrite(err error) {
	db.noteDamage(err)
	now := db.Now().UnixNano()
	switch {
	case err == nil:
		db.health.ok.Store(now)
	case domain.ErrorCode(err) == domain.EUNAVAILABLE:
		db.health.fail.Store(&writeFailure{at: now, err: err})
	}
}

// Writable reports whether the database takes writes. A write that failed for want of
// storage stands for ProbeEvery, whatever succeeds meanwhile (a full disk still takes some
// small writes); a commit stands for ProbeEvery too. Past both, it commits a one-row probe,
// one at a time, so that a flood of health checks costs one write per ProbeEvery. A damaged
// file, once SQLite found it, stands for good.
func (db *DB) Writable(ctx context.Context) error {
	if err, fresh := db.lastWrite(); fresh {
		return err
	}
	if !db.health.probe.TryLock() {
		err, _ := db.lastWrite()
		return err // a probe is under way: the last outcome stands
	}
	defer db.health.probe.Unlock()
	if err, fresh := db.lastWrite(); fresh {
		return err
	}
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO write_probe (id, probed_at) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at`, formatTime(db.Now()))
		return err
	})
}

// lastWrite is the outcome of the latest writes, and whether it is recent enough to stand.
func (db *DB) lastWrite() (err error, fresh bool) {
	if d := db.health.damage.Load(); d != nil {
		return d.err, true
	}
	now, window := db.Now().UnixNano(), int64(db.ProbeEvery)
	if f := db.health.fail.Load(); f != nil && now-f.at < window {
		return f.err, true
	}
	ok := db.health.ok.Load()
	return nil, ok != 0 && now-ok < window
}

// RefuseWrites makes every write fail as on a read-only file system (PRAGMA query_only on
// the writer), or, with false, take writes again. It is how tests take the disk away.
func (db *DB) RefuseWrites(ctx context.Context, refuse bool) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	_, err := db.write.ExecContext(ctx, `PRAGMA query_only = `+map[bool]string{true: "1", false: "0"}[refuse])
	return err
}

// CapSize caps the database at its present size in pages (PRAGMA max_page_count on the
// writer), as a full disk would; false lifts the cap. It is how tests fill the disk.
func (db *DB) CapSize(ctx context.Context, capped bool) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	q := `PRAGMA max_page_count = 4294967294`
	if capped {
		q = `PRAGMA max_page_count = 1` // raised by SQLite to the present page count
	}
	_, err := db.write.ExecContext(ctx, q)
	return err
}
