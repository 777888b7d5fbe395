// Package store persists Parley's conversations, events and question ledger in SQLite.
package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/mattn/go-sqlite3" // the SQLite driver

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/migrations"
)

// DB is Parley's database. On SQLite: one writer connection with immediate transactions,
// and a pool of readers; WAL lets the readers run while the writer writes. On PostgreSQL
// (pg): one pool, whose write transactions lock what they change (see Tx.lockConversation)
// and run side by side, whichever instance makes them.
type DB struct {
	write *sql.DB
	read  *sql.DB
	// light is the pool of the writes that are not a person's (PostgreSQL; see lightTx).
	light *sql.DB
	pg    bool
	// instance is this process's id as an owner of work (see Recover), registered once it
	// recovered; instanceName says which process it is, for people.
	instance, instanceName string
	registered             bool
	// On PostgreSQL: the database's connection settings, and the connection the lease is
	// renewed on (see Renew).
	pgConfig  *pgx.ConnConfig
	leaseMu   sync.Mutex
	leaseConn *pgx.Conn
	// Lease is how long this instance's work stays its own without a renewal (default Lease).
	Lease time.Duration
	// On PostgreSQL: the notification channel of the schema, the newest event the observer
	// was handed, what else the hub hears of other instances, the stop of the listener.
	channel    string
	heardLog   heardLog // the listener's alone
	own        ownEvents
	remoteObs  domain.Remote
	onAuth     func()
	stopListen func()
	// On SQLite: the count of auth changes (see AuthChanges) as the last write transaction
	// read it. Another process (parley user, parley group) changes access in a transaction
	// of its own; the next write here sees it, and tells onAuth before its own events can be
	// read.
	authSeen int64
	// bucketsSwept is when the full rate-limit buckets were last deleted (unix nanoseconds).
	bucketsSwept atomic.Int64
	// Now is the clock, replaced in tests.
	Now func() time.Time
	// ProbeEvery is how long a write's outcome stands for Writable (default ProbeEvery).
	ProbeEvery time.Duration

	// writeMu makes a write transaction and the hand-over of its events one step, so that
	// observers see events in commit order (SQLite).
	writeMu sync.Mutex
	obsMu   sync.Mutex // guards observe, remoteObs and onAuth for the listener (PostgreSQL)
	observe func([]domain.Event)
	stmt    statements
	drafts  draftIndex
	health  writeHealth
	// lock is this process's hold on the database, nil when it shares it.
	lock   *dbLock
	writes func(took time.Duration, err error) // see ObserveWrites
}

// statements are the writes of the hot paths, prepared once on SQLite's writer connection.
// PostgreSQL's run by their text, which pgx prepares once a connection (see pgbegin.go: a
// statement of database/sql's would run outside pgConn's transaction).
type statements struct {
	insertEvent, touch, insertDrafts, deleteDrafts, authChanges *sql.Stmt
}

const (
	insertDraftsSQL = `INSERT INTO draft_batches (drafts, owner) VALUES (?, ?) RETURNING id`
	deleteDraftsSQL = `DELETE FROM draft_batches WHERE id = ?`
)

func (db *DB) prepare(ctx context.Context) error {
	if db.pg {
		return nil
	}
	for _, p := range []struct {
		s   **sql.Stmt
		sql string
	}{
		// An event belongs to its run's version, a run-less one to the version shown.
		{&db.stmt.insertEvent, `INSERT INTO events (conversation_id, run_id, kind, payload, created_at, version) VALUES (?1, ?2, ?3, ?4, ?5,
			coalesce((SELECT version FROM runs WHERE id = ?2), (SELECT version FROM conversations WHERE id = ?1), 0)) RETURNING id, version`},
		{&db.stmt.touch, `UPDATE conversations SET updated_at = ? WHERE id = ?`},
		{&db.stmt.insertDrafts, insertDraftsSQL},
		{&db.stmt.deleteDrafts, deleteDraftsSQL},
		{&db.stmt.authChanges, `SELECT n FROM auth_changes`},
	} {
		st, err := db.write.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.s = st
	}
	return nil
}

// Observe sets the function that receives the events of each write transaction once it has
// committed, in commit order (the runner's hub). It runs before the next write begins, so it
// must be quick and must not write.
func (db *DB) Observe(fn func([]domain.Event)) {
	db.writeMu.Lock()
	db.obsMu.Lock()
	db.observe = fn
	db.obsMu.Unlock()
	db.writeMu.Unlock()
}

// Options say how a process uses its database.
type Options struct {
	// Holder names the process in the lock it holds ("parley serve"), for the message a
	// second process is refused with. Empty: the program's name.
	Holder string
	// Shared lets a short-lived command use a database that another Parley process holds,
	// through SQLite's own locking (each write one short transaction). Such a command holds
	// the database only while opening it, and migrates it only when no one else has it: a
	// database in use that needs migrating is refused.
	Shared bool
	// Synchronous is SQLite's synchronous setting: "normal" (the default; in WAL mode, a
	// commit survives a crash of the process, and power loss may undo the last commits but
	// never corrupts) or "full" (every commit reaches the disk before it returns).
	Synchronous string
	// Pool is how many connections to PostgreSQL the process holds at most for its reads and
	// writes (default PoolSize), besides the one it listens on and the one it renews its
	// lease on.
	Pool int
	// SkipCheck skips SQLite's quick_check of the file at start (see checkIntegrity), which
	// refuses a damaged file; Logger gets its warnings (default slog.Default()).
	SkipCheck bool
	Logger    *slog.Logger
}

// Open opens (creating if needed) the database at path for this process alone, and applies
// pending migrations: OpenWith with no options.
func Open(ctx context.Context, path string) (*DB, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith opens the database at path after checking it: it must be writable, no other
// process may hold it (unless opts.Shared), and it must be new or a Parley database this
// binary knows; another application's file, or a newer Parley's, or a damaged one (see
// checkIntegrity), is refused unchanged. Then it applies pending migrations.
func OpenWith(ctx context.Context, path string, opts Options) (*DB, error) {
	if IsPostgres(path) {
		return openPostgresDB(ctx, path, cmp.Or(opts.Pool, PoolSize))
	}
	synchronous := strings.ToUpper(cmp.Or(opts.Synchronous, "normal"))
	if synchronous != "NORMAL" && synchronous != "FULL" {
		return nil, fmt.Errorf("synchronous %q: use normal or full", opts.Synchronous)
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	lock, err := lockDatabase(path, opts.Holder)
	var inUse *inUseError
	var todo []string
	switch {
	case opts.Shared && errors.As(err, &inUse):
		// Its holder has checked and migrated it; migrate tells if it needs more.
	case err != nil:
		return nil, err
	default:
		if err := checkIntegrity(ctx, path, opts); err != nil {
			lock.release()
			return nil, err
		}
		if todo, err = checkFile(ctx, path); err != nil {
			lock.release()
			return nil, err
		}
	}
	db, err := open(ctx, path, synchronous, inUse, todo)
	if err != nil {
		lock.release()
		return nil, err
	}
	if opts.Shared {
		lock.release()
	} else {
		db.lock = lock
	}
	return db, nil
}

// open opens the pools and migrates; inUse is the process the database is shared with, if
// any, and todo the migrations checkFile found it to need when it is not.
func open(ctx context.Context, path, synchronous string, inUse *inUseError, todo []string) (*DB, error) {
	dsn := func(mode string) string {
		q := url.Values{}
		q.Set("_journal_mode", "WAL")
		q.Set("_foreign_keys", "on")
		q.Set("_busy_timeout", "10000")
		q.Set("_synchronous", synchronous)
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
	db := &DB{write: w, Now: func() time.Time { return time.Now().UTC() }, ProbeEvery: ProbeEvery, Lease: Lease}
	db.instance, db.instanceName = newInstance()
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.migrate(ctx, path, inUse, todo); err != nil {
		w.Close()
		if strings.Contains(err.Error(), "no such module: fts5") {
			return nil, fmt.Errorf("%w: this binary's SQLite has no full-text search; build it with -tags sqlite_fts5", err)
		}
		return nil, err
	}
	if err := db.prepare(ctx); err != nil {
		w.Close()
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

// Close closes both pools, and lets the database go for another process.
func (db *DB) Close() error {
	db.resign(context.Background())
	if db.pg {
		db.stopListen()
		db.light.Close()
		return db.write.Close()
	}
	err := db.read.Close()
	if werr := db.write.Close(); err == nil {
		err = werr
	}
	db.lock.release()
	return err
}

// migrate applies the migrations todo, each in its own transaction, in name order: those
// checkFile found the database to need, under the lock, so that nothing has changed since.
// A database shared with another process (inUse) was not checked: it is read here, and not
// migrated: it must need nothing.
func (db *DB) migrate(ctx context.Context, path string, inUse *inUseError, todo []string) error {
	if inUse != nil {
		known, err := migrationNames()
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		s, err := readSchema(ctx, db.write)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if todo, err = s.pending(path, known); err != nil || len(todo) == 0 {
			return err
		}
		return fmt.Errorf("database %s needs migrating (%s), which cannot happen while %s uses it: stop that one first, or use the Parley it runs",
			path, strings.Join(todo, ", "), inUse.who())
	}
	if len(todo) == 0 {
		return nil
	}
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, name := range todo {
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

const timeFormat = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.read.PingContext(ctx) }

// Snapshot writes a copy of the database as committed now to a new file at path: a backup
// taken while Parley runs (VACUUM INTO, from a reader: writers go on meanwhile).
func (db *DB) Snapshot(ctx context.Context, path string) error {
	if db.pg {
		return errors.New("snapshot: Parley on PostgreSQL is backed up with pg_dump, not by Parley")
	}
	if _, err := db.read.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("snapshot to %s: %w", path, err)
	}
	return nil
}

// insertID runs an INSERT and returns the id of the row it made, through RETURNING, which
// both SQLite and PostgreSQL have (PostgreSQL has no last insert id).
func insertID(ctx context.Context, tx *Tx, query string, args ...any) (id int64, err error) {
	err = tx.QueryRowContext(ctx, query+` RETURNING id`, args...).Scan(&id)
	return id, err
}
