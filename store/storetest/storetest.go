// Package storetest opens real, migrated databases for tests: SQLite files, or with
// PARLEY_TEST_STORE=postgres, fresh schemas of the PostgreSQL database PARLEY_TEST_POSTGRES
// names, so that the same tests run against each store.
package storetest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, for making schemas

	"github.com/parley-chat/parley/store"
)

// Postgres reports whether the tests run against PostgreSQL (PARLEY_TEST_STORE=postgres).
func Postgres() bool { return os.Getenv("PARLEY_TEST_STORE") == "postgres" }

// New opens a fresh database, closed when the test ends.
func New(tb testing.TB) *store.DB {
	tb.Helper()
	return Open(tb, Path(tb))
}

// Path names a fresh, empty database for the test: a file in a temp dir, or on PostgreSQL a
// schema of its own, dropped when the test ends. Open it as often as the test needs.
func Path(tb testing.TB) string {
	tb.Helper()
	if !Postgres() {
		return filepath.Join(tb.TempDir(), "parley.db")
	}
	return Schema(tb)
}

// Open opens the database at path (e.g. to reopen one after a simulated restart).
func Open(tb testing.TB, path string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// SQLiteOnly skips a test of what only the SQLite store has (its file, its locks, its
// pragmas) when the tests run against PostgreSQL.
func SQLiteOnly(tb testing.TB) {
	tb.Helper()
	if Postgres() {
		tb.Skip("a test of the SQLite file")
	}
}

var extensions sync.Once

// PostgresURL is the server the PostgreSQL tests use. It skips the test when none is set,
// and fails it under CI, where one must be.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("PARLEY_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("CI") != "" {
			tb.Fatal("PARLEY_TEST_POSTGRES is not set: under CI, .ci/run starts a PostgreSQL for the tests")
		}
		tb.Skip("no PostgreSQL: set PARLEY_TEST_POSTGRES (eval \"$(.ci/postgres)\" starts one)")
	}
	return u
}

// Schema makes a fresh schema in the PostgreSQL database of PostgresURL and returns a URL
// whose connections use it; it is dropped when the test ends.
func Schema(tb testing.TB) string {
	tb.Helper()
	base := PostgresURL(tb)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	ctx := context.Background()
	extensions.Do(func() {
		// Extensions are the database's, in public: every test's schema finds them there.
		_, err = admin.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS citext SCHEMA public; CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public`)
	})
	if err != nil {
		tb.Fatalf("postgres extensions: %v", err)
	}
	url, drop, err := store.NewSchema(ctx, base, "t_")
	if err != nil {
		tb.Fatalf("postgres schema: %v", err)
	}
	tb.Cleanup(drop)
	return url
}
