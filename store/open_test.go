package store_test

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-chat/parley/migrations"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// files maps each file in dir to a hash of its bytes: what a refused Open must leave as it
// found it, with nothing beside it.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprintf("%d bytes, sha256 %.8x", len(b), sha256.Sum256(b))
	}
	return out
}

// sqliteFile makes an SQLite file at path, in the journal mode given, holding stmts.
func sqliteFile(t *testing.T, path, journal string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode="+journal)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	for _, q := range stmts {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestOpen_ChecksTheFileFirst(t *testing.T) {
	app := []string{`CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)`, `CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)`,
		`INSERT INTO users (email) VALUES ('a@example.com')`}
	refused := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"another application's database", func(t *testing.T, path string) { sqliteFile(t, path, "DELETE", app...) },
			"is not a Parley database: it has tables orders, users but no Parley migration history; Parley leaves it as it is"},
		{"another application's database in WAL mode", func(t *testing.T, path string) { sqliteFile(t, path, "WAL", app...) },
			"is not a Parley database: it has tables orders, users but no Parley migration history"},
		{"another tool's schema_migrations", func(t *testing.T, path string) {
			sqliteFile(t, path, "DELETE", `CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, dirty BOOLEAN)`,
				`INSERT INTO schema_migrations VALUES (20240101, false)`, `CREATE TABLE notes (body TEXT)`)
		}, "is not a Parley database: it has tables notes, schema_migrations but no Parley migration history"},
		{"not SQLite at all", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("name,email\nann,a@example.com\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is not a Parley database: it is not an SQLite file at all"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.db")
			tt.make(t, path)
			before := files(t, dir)
			db, err := store.Open(ctx, path)
			if err == nil {
				db.Close()
			}
			if err == nil || !strings.Contains(err.Error(), path+" "+tt.want) {
				t.Errorf("Open = %v, want %q", err, path+" "+tt.want)
			}
			if after := files(t, dir); !maps.Equal(before, after) {
				t.Errorf("the directory changed: %v, then %v", before, after)
			}
		})
	}

	// What a Parley may take as its own: nothing yet, or a start that stopped before its first migration.
	accepted := []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"an empty file", func(t *testing.T, path string) { os.WriteFile(path, nil, 0o644) }},
		{"an SQLite file without tables", func(t *testing.T, path string) { sqliteFile(t, path, "DELETE", `VACUUM`) }},
		{"a Parley that stopped before its first migration", func(t *testing.T, path string) {
			sqliteFile(t, path, "WAL", `CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`)
		}},
	}
	for _, tt := range accepted {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "parley.db")
			tt.make(t, path)
			db := storetest.Open(t, path)
			if _, err := db.CreateConversation(ctx, 0, "a", "b", ""); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOpen_RefusesANewerParleysDatabase(t *testing.T) {
	known, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	path, exec, done := oldDB(t, known...)
	exec(`INSERT INTO schema_migrations VALUES ('0099_from_the_future.sql', '2027-01-01T00:00:00Z')`)
	done()
	before := files(t, filepath.Dir(path))
	db, err := store.Open(ctx, path)
	if err == nil {
		db.Close()
	}
	want := fmt.Sprintf("%s was written by a newer Parley: it has migration 0099_from_the_future.sql, this binary knows up to %s", path, known[len(known)-1])
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open = %v, want %q", err, want)
	}
	if after := files(t, filepath.Dir(path)); !maps.Equal(before, after) {
		t.Errorf("the directory changed: %v, then %v", before, after)
	}
}

func TestOpen_OneProcessPerDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.db")
	server, err := store.OpenWith(ctx, path, store.Options{Holder: "parley serve"})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	db, err := store.Open(ctx, path)
	if err == nil {
		db.Close()
	}
	want := fmt.Sprintf("database %s is in use by parley serve, pid %d on ", path, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "one process per database") {
		t.Fatalf("a second Open = %v, want %q", err, want)
	}

	// An operator's command may share it: its writes are short transactions.
	cmd, err := store.OpenWith(ctx, path, store.Options{Holder: "parley user add", Shared: true})
	if err != nil {
		t.Fatalf("a shared Open beside the server = %v", err)
	}
	if _, err := cmd.CreateUser(ctx, "ann", "hash", ""); err != nil {
		t.Fatal(err)
	}
	cmd.Close()
	if u, _, err := server.UserByName(ctx, "ann"); err != nil || u.Name != "ann" {
		t.Fatalf("the server does not see the command's account: %+v, %v", u, err)
	}

	// Once the server lets go, the database is free again, and no lock file stays behind.
	server.Close()
	next, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after the holder closed = %v", err)
	}
	next.Close()
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file is still there after the last close (%v)", err)
	}
}

func TestOpen_SharedNeverMigratesADatabaseInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	server, err := store.OpenWith(ctx, path, store.Options{Holder: "parley serve"})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	// As if the command were a newer Parley than the server: the database lacks its last migration.
	known, _ := fs.Glob(migrations.FS, "*.sql")
	last := known[len(known)-1]
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM schema_migrations WHERE name = ?`, last); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err := store.OpenWith(ctx, path, store.Options{Shared: true})
	if err == nil {
		db.Close()
	}
	want := fmt.Sprintf("database %s needs migrating (%s), which cannot happen while parley serve, pid %d", path, last, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open = %v, want %q", err, want)
	}
}
