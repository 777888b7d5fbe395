// Package store persists Parley's conversations, events and question ledger in SQLite.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver

	"github.com/parley-chat/parley/migrations"
)

// DB is Parley's SQLite database: one writer connection with immediate transactions,
// and a pool of readers. WAL lets the readers run while the writer writes.
type DB struct {
	write *sql.DB
	read  *sql.DB
	// Now is the clock, replaced in tests.
	Now func() time.Time
}

// Open opens (creating if needed) the database at path and applies pending migrations.
func Open(ctx context.Context, path string) (*DB, error) {
	dsn := func(mode string) string {
		q := url.Values{}
		q.Set("_journal_mode", "WAL")
		q.Set("_foreign_keys", "on")
		q.Set("_busy_timeout", "10000")
		q.Set("_synchronous", "NORMAL")
		q.Set("_txlock", "immediate")
		if mode == "ro" {
			q.Set("mode", "ro")
			q.Set("_txlock", "deferred")
		}
		return "file:" + uriPath(path) + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite3", dsn("rw"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	db := &DB{write: w, Now: func() time.Time { return time.Now().UTC() }}
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		if strings.Contains(err.Error(), "no such module: fts5") {
			return nil, fmt.Errorf("%w: this binary's SQLite has no full-text search; build it with -tags sqlite_fts5", err)
		}
		return nil, err
	}
	r, err := sql.Open("sqlite3", dsn("ro"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(max(4, runtime.NumCPU()))
	db.read = r
	return db, nil
}

// uriPath escapes the characters that would end or change an SQLite URI file name.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}

// Close closes both pools.
func (db *DB) Close() error {
	err := db.read.Close()
	if werr := db.write.Close(); err == nil {
		err = werr
	}
	return err
}

// migrate applies every migration not yet recorded, each in its own transaction, in name order.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := db.applyMigration(ctx, name); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, name string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	body, err := fs.ReadFile(migrations.FS, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, formatTime(db.Now())); err != nil {
		return err
	}
	return tx.Commit()
}

// tx runs fn in one immediate write transaction.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

const timeFormat = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.read.PingContext(ctx) }
