package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, for the benchmark's schemas

	"github.com/parley-chat/parley/store"
)

// benchDatabase makes a new, empty database for one run: a file in a temporary directory,
// or with --db a schema of its own in that PostgreSQL database. clean removes it.
func benchDatabase(o benchOptions) (dsn string, clean func(), err error) {
	if o.db == "" {
		dir, err := os.MkdirTemp("", "parley-bench-")
		if err != nil {
			return "", nil, err
		}
		return filepath.Join(dir, "parley.db"), func() { os.RemoveAll(dir) }, nil
	}
	admin, err := sql.Open("pgx", o.db)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "parley_bench_" + hex.EncodeToString(b)
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	u, err := url.Parse(o.db)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String(), func() {
		admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		admin.Close()
	}, nil
}

// benchDescribe names the database the benchmark runs Parley on.
func benchDescribe(o benchOptions) string {
	if o.db == "" {
		return "SQLite (a new file each run)"
	}
	return "PostgreSQL " + store.Describe(o.db) + " (a new schema each run)"
}
