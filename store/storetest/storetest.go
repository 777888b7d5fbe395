// Package storetest opens real, migrated SQLite databases for tests.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parley-chat/parley/store"
)

// New opens a fresh database file in a temp dir, closed when the test ends.
func New(tb testing.TB) *store.DB {
	tb.Helper()
	return Open(tb, filepath.Join(tb.TempDir(), "parley.db"))
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
