package store

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A check that does not finish in time lets Parley start, and says so; a start given up
// (its context cancelled) is an error.
func TestQuickCheck_Bounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := quickCheck(context.Background(), path, time.Minute, nil); err != nil {
		t.Fatalf("an undamaged file: %v", err)
	}

	var logs bytes.Buffer
	if err := quickCheck(context.Background(), path, time.Nanosecond, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatalf("a check out of time = %v, want it passed", err)
	}
	if !strings.Contains(logs.String(), "database not checked: SQLite's quick_check did not finish in time") ||
		!strings.Contains(logs.String(), "PRAGMA quick_check") {
		t.Errorf("the warning: %s", logs.String())
	}

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := quickCheck(gone, path, time.Minute, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled start = %v, want context.Canceled", err)
	}
}
