package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every piece of the store's SQL that PostgreSQL says differently is one pgFragments knows,
// as written: a query reformatted (or a new one) would otherwise pass on SQLite and fail on
// PostgreSQL only where a test happens to run it.
func TestPgFragments_CoverTheStoresSQL(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	sqliteOnly := []string{"json_extract(", "COLLATE NOCASE", "IS NOT 1", "CROSS JOIN", " LIKE ?", "min(deadline", "SET id = max("}
	var known []string
	for i := 0; i < len(pgFragmentPairs); i += 2 {
		known = append(known, pgFragmentPairs[i])
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "postgres.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			for _, piece := range sqliteOnly {
				if !strings.Contains(line, piece) {
					continue
				}
				covered := false
				for _, k := range known {
					// A fragment may span lines: its first line must be in it.
					first, _, _ := strings.Cut(k, "\n")
					covered = covered || strings.Contains(line, first) || strings.Contains(first, strings.TrimSpace(line))
				}
				if !covered {
					t.Errorf("%s:%d: %q is SQLite's SQL that pgFragments does not translate:\n%s", f, n+1, piece, line)
				}
			}
		}
	}
	if got := pgSQL("SELECT a FROM t WHERE json_extract(payload, '$.nonce') = ? AND x = ? AND y = ?2"); got != "SELECT a FROM t WHERE (payload::json->>'nonce') = $1 AND x = $2 AND y = $2" {
		t.Errorf("pgSQL = %q", got)
	}
}
