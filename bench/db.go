package bench

import (
	"context"
	"os"
	"path/filepath"

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
	return store.NewSchema(context.Background(), o.db, "parley_bench_")
}

// benchDescribe names the database the benchmark runs Parley on.
func benchDescribe(o benchOptions) string {
	if o.db == "" {
		return "SQLite (a new file each run)"
	}
	return "PostgreSQL " + store.Describe(o.db) + " (a new schema each run)"
}
