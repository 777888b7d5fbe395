package storetest

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"os"
	"slices"
	"testing"
)

// Damage overwrites with junk, in the SQLite file at path, the root pages of the tables
// named and of their indexes: what a failing disk or a stray write does to a database, in the
// pages every read of them passes through. SQLite finds them damaged the moment it reads one.
// Whoever has the file open must not have those pages cached (a database just opened has
// only its schema), and what they hold must be in the file itself, not only in its -wal.
func Damage(tb testing.TB, path string, tables ...string) {
	tb.Helper()
	pages := rootPages(tb, path, tables)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	header := make([]byte, 100)
	if _, err := f.ReadAt(header, 0); err != nil {
		tb.Fatal(err)
	}
	size := int64(binary.BigEndian.Uint16(header[16:18])) // the page size; 1 stands for 65536
	if size == 1 {
		size = 65536
	}
	junk := bytes.Repeat([]byte("junk"), int(size)/4)
	for _, page := range pages {
		if _, err := f.WriteAt(junk, (page-1)*size); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
}

// rootPages are the root pages of the tables and of their indexes in the SQLite file at path.
func rootPages(tb testing.TB, path string, tables []string) []int64 {
	tb.Helper()
	ro, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		tb.Fatal(err)
	}
	defer ro.Close()
	var pages []int64
	for _, table := range tables {
		rows, err := ro.Query(`SELECT rootpage FROM sqlite_master WHERE tbl_name = ? AND rootpage > 1`, table)
		if err != nil {
			tb.Fatal(err)
		}
		n := len(pages)
		for rows.Next() {
			var page int64
			if err := rows.Scan(&page); err != nil {
				tb.Fatal(err)
			}
			pages = append(pages, page)
		}
		if err := rows.Close(); err != nil || len(pages) == n {
			tb.Fatalf("damage %s: no table %s (%v)", path, table, err)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(pages)))
}
