package store

import (
	"context"
	"path/filepath"
	"testing"
)

func TestOpenWith_Synchronous(t *testing.T) {
	for mode, want := range map[string]int{"": 1, "normal": 1, "full": 2, "FULL": 2} {
		db, err := OpenWith(context.Background(), filepath.Join(t.TempDir(), "p.db"), Options{Synchronous: mode})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := db.write.QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil || got != want {
			t.Errorf("synchronous %q: PRAGMA synchronous = %d, %v; want %d", mode, got, err, want)
		}
		db.Close()
	}
	if _, err := OpenWith(context.Background(), filepath.Join(t.TempDir(), "p.db"), Options{Synchronous: "sometimes"}); err == nil {
		t.Error("synchronous \"sometimes\" was accepted")
	}
}
