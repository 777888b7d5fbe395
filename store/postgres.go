package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	neturl "net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/parley-chat/parley/migrations"
)

// IsPostgres reports whether a --db value names a PostgreSQL database rather than a SQLite
// file: a postgres:// or postgresql:// URL.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openPostgres opens a pool on the PostgreSQL database at url through pgx, behind the
// translation of the store's SQL (written for SQLite) into PostgreSQL's.
func openPostgres(cfg *pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
}

// pgConnector hands out pgx connections that take the store's SQL as SQLite would: the one
// place where the two dialects meet.
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: conn.(*stdlib.Conn)}, nil
}

// pgConn is a pgx connection whose statements are translated by pgSQL on the way in, and
// whose arguments become what PostgreSQL's columns hold (flags are integers there, as they
// are in SQLite).
type pgConn struct {
	*stdlib.Conn
	tx *pgTx // the transaction it is in, begun by BeginTx (see pgtx.go)
}

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext prepares a statement of database/sql's; in a transaction whose BEGIN is not
// sent yet, the BEGIN goes first (the statement runs through pgx, not through pgConn).
func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.tx != nil {
		if err := c.tx.begin(ctx); err != nil {
			return nil, err
		}
	}
	return c.Conn.PrepareContext(ctx, pgSQL(query))
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	query = pgSQL(query)
	if c.tx != nil && c.tx.broken != nil {
		return nil, c.tx.broken
	}
	if c.tx != nil && c.tx.hold(ctx, query, args) {
		return driver.RowsAffected(0), nil
	}
	if c.tx != nil && !c.tx.begun {
		return c.tx.execFirst(ctx, query, args)
	}
	return c.Conn.ExecContext(ctx, query, args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	query = pgSQL(query)
	if c.tx != nil && c.tx.broken != nil {
		return nil, c.tx.broken
	}
	if c.tx != nil && !c.tx.begun {
		return c.tx.queryFirst(ctx, query, args)
	}
	return c.Conn.QueryContext(ctx, query, args)
}

func (c *pgConn) CheckNamedValue(v *driver.NamedValue) error {
	if b, ok := v.Value.(bool); ok {
		v.Value = map[bool]int64{false: 0, true: 1}[b]
	}
	return c.Conn.CheckNamedValue(v)
}

// pgFragments are the pieces of the store's SQL that PostgreSQL says differently, with what
// it says instead. Everything else in the store is SQL both accept.
var pgFragments = strings.NewReplacer(pgFragmentPairs...)

// pgFragmentPairs are pgFragments' pieces: each SQLite piece, then PostgreSQL's.
var pgFragmentPairs = []string{
	// SQLite's two-argument min and max are PostgreSQL's least and greatest.
	// A conversation's id is one above the highest ever given on SQLite (one writer), the
	// next of a sequence on PostgreSQL (writers side by side).
	`max(coalesce((SELECT max(id) FROM conversations), 0), coalesce((SELECT id FROM id_floor WHERE name = 'conversations'), 0)) + 1`,
	`nextval('conversation_ids')`,
	`SET id = max(id, excluded.id)`, `SET id = greatest(id_floor.id, excluded.id)`,
	`min(deadline, escalate_at)`, `least(deadline, escalate_at)`,
	// JSON held as text: SQLite's json_extract gives a flag as 1 or 0, PostgreSQL's ->> as text.
	// It is read as json, not jsonb: jsonb refuses a text holding \u0000, json keeps it.
	`json_extract(payload, '$.message_id')`, `(payload::json->>'message_id')`,
	`json_extract(payload, '$.nonce')`, `(payload::json->>'nonce')`,
	`json_extract(e.payload, '$.resolution.question_id')`, `(e.payload::json#>>'{resolution,question_id}')::bigint`,
	// Names that ignore case are citext columns on PostgreSQL.
	`name = ? COLLATE NOCASE`, `name = ?`,
	`ORDER BY g.name COLLATE NOCASE`, `ORDER BY g.name`,
	// SQLite's CROSS JOIN is an inner join whose order the planner keeps, and a unary + keeps
	// it off an index; PostgreSQL's planner takes no such hints.
	`CROSS JOIN questions q1 ON`, `JOIN questions q1 ON`,
	`CROSS JOIN conversations c ON`, `JOIN conversations c ON`,
	`+q.state = 'pending'`, `q.state = 'pending'`,
	// SQLite's LIKE ignores case (ASCII), PostgreSQL's ILIKE does.
	` LIKE ? ESCAPE '\'`, ` ILIKE ? ESCAPE '\'`,
}

// pgCache holds each statement translated, by its SQLite text: the store's statements are
// few and fixed, so it stays small.
var pgCache sync.Map

// pgSQL translates a statement of the store's into PostgreSQL's: the fragments above, and
// the parameters ? and ?N into $N.
func pgSQL(query string) string {
	if q, ok := pgCache.Load(query); ok {
		return q.(string)
	}
	q := rebind(pgFragments.Replace(query))
	pgCache.Store(query, q)
	return q
}

// rebind numbers SQLite's parameters as PostgreSQL's: ?N is $N, and a bare ? is one more
// than the highest number so far, as SQLite numbers it. Quoted text, quoted names and
// comments are left as they are.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	highest := 0
	for i := 0; i < len(query); i++ {
		switch c := query[i]; c {
		case '\'', '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1
		case '-':
			if strings.HasPrefix(query[i:], "--") {
				end := strings.IndexByte(query[i:], '\n')
				if end < 0 {
					end = len(query) - i
				}
				b.WriteString(query[i : i+end])
				i += end - 1
				continue
			}
			b.WriteByte(c)
		case '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n := highest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(query[i+1 : j])
			}
			highest = max(highest, n)
			b.WriteString("$" + strconv.Itoa(n))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pgUnavailable reports whether err is PostgreSQL failing for want of storage or of the
// server (a full disk, a read-only server, a lost connection), with the cause in words.
func pgUnavailable(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "53"), // insufficient resources: disk full, out of memory, too many connections
			strings.HasPrefix(pe.Code, "57P"), // the server shutting down or not started
			pe.Code == "25006":                // a read-only transaction: a standby, or writes refused
			return pe.Message, true
		}
		return "", false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || pgconn.SafeToRetry(err) {
		return "no connection to PostgreSQL", true
	}
	return "", false
}

// Locks of PostgreSQL's advisory kind, by the number every Parley instance takes them at.
const (
	// migrateLock is held while an instance migrates: the others wait, then find nothing to do.
	migrateLock = 0x7061726c6579_01
)

// openPostgresDB opens the PostgreSQL database at url and applies pending migrations under
// the migration lock.
func openPostgresDB(ctx context.Context, url string, poolSize int) (*DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", redactURL(url), err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, set := cfg.RuntimeParams["plan_cache_mode"]; !set {
		// The store's statements are few and fixed, each run many times on each
		// connection: planned once a connection, for any values (a generic plan), rather than
		// again for each call's values while PostgreSQL thinks a custom plan better. In a
		// burst of answers the resumed replies came about a quarter sooner so, and the store's
		// benchmarks of lists and search ran no slower (docs/benchmarks.md). A URL that sets
		// plan_cache_mode keeps its own.
		cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	pool := openPostgres(cfg)
	// Each instance (and command) holds up to poolSize connections, one more to listen and
	// one to renew its lease on: PostgreSQL's max_connections must be above their sum.
	pool.SetMaxOpenConns(poolSize)
	pool.SetMaxIdleConns(poolSize)
	// Writes that are not a person's go through a few connections of their own that commit
	// without waiting for the disk (see lightTx).
	lightCfg := cfg.Copy()
	lightCfg.RuntimeParams["synchronous_commit"] = "off"
	light := openPostgres(lightCfg)
	light.SetMaxOpenConns(lightPool)
	light.SetMaxIdleConns(lightPool)
	db := &DB{write: pool, read: pool, light: light, pg: true, Now: func() time.Time { return time.Now().UTC() }, ProbeEvery: ProbeEvery, Lease: Lease}
	db.instance, db.instanceName = newInstance()
	db.pgConfig = cfg
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		light.Close()
		return nil, fmt.Errorf("open %s: %w", redactURL(url), err)
	}
	if err := db.migratePostgres(ctx, cfg); err != nil {
		pool.Close()
		light.Close()
		return nil, fmt.Errorf("migrate %s: %w", redactURL(url), err)
	}
	if err := db.prepare(ctx); err != nil {
		pool.Close()
		light.Close()
		return nil, err
	}
	if err := pool.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&db.channel); err != nil {
		pool.Close()
		light.Close()
		return nil, err
	}
	db.channel = channelName(db.channel)
	// The instance hears the others from the moment it is open.
	lctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan error, 1), make(chan struct{})
	go db.listen(lctx, cfg, ready, done)
	db.stopListen = func() { cancel(); <-done }
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		db.stopListen()
		pool.Close()
		light.Close()
		return nil, fmt.Errorf("listen on %s: %w", redactURL(url), err)
	}
	return db, nil
}

// lightPool is how many connections an instance holds for the writes that are not a
// person's (see lightTx).
const lightPool = 2

// PoolSize is how many connections to PostgreSQL an instance holds at most by default
// (Options.Pool), besides the one it listens on and the one it renews its lease on.
const PoolSize = 16

// channelName is the notification channel of a schema: PostgreSQL's names stop at 63
// bytes, so a long schema name is shortened to a hash of it.
func channelName(schema string) string {
	if name := "parley:" + schema; len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(schema))
	return "parley:" + hex.EncodeToString(sum[:16])
}

// redactURL is a database URL without its password, for messages and logs.
func redactURL(s string) string {
	u, err := neturl.Parse(s)
	if err != nil {
		return "the PostgreSQL database"
	}
	return u.Redacted()
}

// migratePostgres applies the PostgreSQL migrations the database lacks, each in its own
// transaction, while holding the migration lock: instances that start together migrate once.
// A database that records a migration this binary does not know is a newer Parley's, and is
// refused unchanged.
func (db *DB) migratePostgres(ctx context.Context, cfg *pgx.ConnConfig) error {
	// A connection of its own: migrations are PostgreSQL's SQL already, not the store's.
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLock)); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLock))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return err
	}
	known, err := fs.Glob(migrations.Postgres, "postgres/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(known)
	rows, _ := conn.Query(ctx, `SELECT name FROM schema_migrations ORDER BY name`)
	applied, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range applied {
		if !slices.Contains(known, "postgres/"+name) {
			return fmt.Errorf("the database has migration %s, which this Parley does not know: it belongs to a newer Parley; run that one", name)
		}
	}
	for _, path := range known {
		name := strings.TrimPrefix(path, "postgres/")
		if slices.Contains(applied, name) {
			continue
		}
		body, err := fs.ReadFile(migrations.Postgres, path)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)`, name, formatTime(db.Now()))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Describe names a database for logs and messages: a SQLite file as it is, a PostgreSQL URL
// without its password.
func Describe(dsn string) string {
	if IsPostgres(dsn) {
		return redactURL(dsn)
	}
	return dsn
}

// NewSchema makes a new, empty schema named prefix plus a random part in the PostgreSQL
// database at base, and returns a URL whose connections use it (then public, where the
// extensions are) and a function that drops it with everything in it: a database of its
// own for a test or a benchmark run, without making one.
func NewSchema(ctx context.Context, base, prefix string) (dsn string, drop func(), err error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := prefix + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
		admin.Close()
		return "", nil, err
	}
	u, err := neturl.Parse(base)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", name+",public")
	u.RawQuery = q.Encode()
	return u.String(), func() {
		admin.ExecContext(context.WithoutCancel(ctx), `DROP SCHEMA `+name+` CASCADE`)
		admin.Close()
	}, nil
}

// pgRetryable reports whether a transaction failed only for running beside another: a
// deadlock, or a serialization failure. Run again, it sees the other's outcome.
func pgRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}
