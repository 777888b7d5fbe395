package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/parley-chat/parley/migrations"
)

// schema is what a database file holds, as far as deciding whether Parley may use it goes.
type schema struct {
	tables []string // its tables, SQLite's own left out
	// history: it has a schema_migrations table of Parley's shape; applied are its names.
	history bool
	applied []string
}

// migrationNames are the migrations this binary knows, in the order they apply.
func migrationNames() ([]string, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	sort.Strings(names)
	return names, err
}

// readSchema reads the tables of the database q is on, and the migrations it records.
func readSchema(ctx context.Context, q *sql.DB) (schema, error) {
	var s schema
	var err error
	s.tables, err = queryColumn[string](ctx, q, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil || !slices.Contains(s.tables, "schema_migrations") {
		return s, err
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('schema_migrations') WHERE name IN ('name', 'applied_at')`).Scan(&n); err != nil || n != 2 {
		return s, err
	}
	s.history = true
	s.applied, err = queryColumn[string](ctx, q, `SELECT name FROM schema_migrations ORDER BY name`)
	return s, err
}

// pending returns the migrations a database holding s still needs, or why Parley must not
// touch it: it is another application's (tables, but no Parley history), or a newer Parley's
// (migrations this binary does not know).
func (s schema) pending(path string, known []string) ([]string, error) {
	if !slices.Contains(s.applied, known[0]) {
		// New, or a Parley that stopped before its first migration committed.
		if len(s.tables) == 0 || len(s.tables) == 1 && s.history && len(s.applied) == 0 {
			return known, nil
		}
		return nil, fmt.Errorf("%s is not a Parley database: it has %s but no Parley migration history; Parley leaves it as it is (give it a new file, or a Parley database)", path, listTables(s.tables))
	}
	var unknown, todo []string
	for _, n := range s.applied {
		if !slices.Contains(known, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		what := "migration " + unknown[0]
		if len(unknown) > 1 {
			what = "migrations " + strings.Join(unknown, ", ")
		}
		return nil, fmt.Errorf("%s was written by a newer Parley: it has %s, this binary knows up to %s; run that newer Parley, or restore a backup from before it", path, what, known[len(known)-1])
	}
	for _, n := range known {
		if !slices.Contains(s.applied, n) {
			todo = append(todo, n)
		}
	}
	return todo, nil
}

// listTables names a few tables: "tables a, b, c and 17 more".
func listTables(tables []string) string {
	if len(tables) == 1 {
		return "a table " + tables[0]
	}
	const few = 4
	if len(tables) <= few {
		return "tables " + strings.Join(tables, ", ")
	}
	return fmt.Sprintf("tables %s and %d more", strings.Join(tables[:few], ", "), len(tables)-few)
}

// sqliteHeader is how every SQLite database file begins.
var sqliteHeader = []byte("SQLite format 3\x00")

// checkFile checks, without changing it, that the file at path is one Parley may use: new,
// or a Parley database this binary knows. It returns the migrations the file still needs.
func checkFile(ctx context.Context, path string) ([]string, error) {
	known, err := migrationNames()
	if err != nil {
		return nil, err
	}
	s, err := inspect(ctx, path)
	if err != nil {
		return nil, err
	}
	return s.pending(path, known)
}

// inspect reads the schema of the database file at path without changing it, or creating
// anything beside it: a read-only connection that takes the file as immutable (no journal,
// no locks, no -shm). That is safe only while no one writes the file (the caller holds the
// lock). When a -wal file is there, the file alone may be behind it (or mid-checkpoint, after
// a crash), so the connection reads both, read-only.
func inspect(ctx context.Context, path string) (schema, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return schema{}, nil
	case err != nil:
		return schema{}, err
	case fi.IsDir():
		return schema{}, fmt.Errorf("%s is a directory, not a database file", path)
	case fi.Size() == 0:
		return schema{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return schema{}, err
	}
	head := make([]byte, len(sqliteHeader))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return schema{}, fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.Equal(head, sqliteHeader) {
		return schema{}, fmt.Errorf("%s is not a Parley database: it is not an SQLite file at all; Parley leaves it as it is (give it a new file, or a Parley database)", path)
	}
	q := url.Values{"mode": {"ro"}}
	if wal, err := os.Stat(path + "-wal"); err != nil || wal.Size() == 0 {
		q.Set("immutable", "1")
	}
	ro, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?"+q.Encode())
	if err != nil {
		return schema{}, err
	}
	defer ro.Close()
	s, err := readSchema(ctx, ro)
	if err != nil {
		return s, fmt.Errorf("read %s: %w", path, err)
	}
	return s, nil
}

// checkWritable says why Parley could not write the database at path, if it could not: a
// read-only file or directory, or a read-only mount. SQLite would open such a file read-only
// without a word, and every write would fail later.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("database %s: its directory: %w", path, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("database %s: %s is not a directory", path, dir)
	}
	for _, p := range []string{path, dir, path + "-wal", path + "-shm", path + ".lock"} {
		err := writable(p)
		if errors.Is(err, fs.ErrNotExist) && p != dir {
			continue
		}
		if err != nil {
			return fmt.Errorf("database %s is read-only: cannot write %s (%v); Parley writes the database and, beside it, its -wal, -shm and .lock files", path, p, err)
		}
	}
	return nil
}
