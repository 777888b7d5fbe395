package store

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Writable answers from the last write while it is recent, and otherwise probes with a write
// of its own, at most once per ProbeEvery however often it is asked.
func TestDB_Writable(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var mu sync.Mutex
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	later := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	probedAt := func() string {
		var at string
		_ = db.read.QueryRowContext(ctx, `SELECT coalesce(max(probed_at), '') FROM write_probe`).Scan(&at)
		return at
	}

	later(time.Hour) // whatever storetest wrote is long past
	if err := db.Writable(ctx); err != nil {
		t.Fatalf("a fresh database: %v", err)
	}
	first := probedAt()
	if first == "" {
		t.Fatal("no probe was written")
	}
	for range 50 {
		if err := db.Writable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if probedAt() != first {
		t.Errorf("a second probe within ProbeEvery")
	}

	if err := db.RefuseWrites(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := db.Writable(ctx); err != nil {
		t.Errorf("within ProbeEvery of the probe, the probe stands: %v", err)
	}
	later(db.ProbeEvery)
	err = db.Writable(ctx)
	if domain.ErrorCode(err) != domain.EUNAVAILABLE || !strings.Contains(domain.ErrorMessage(err), "readonly") {
		t.Fatalf("writes refused: Writable = %v (%s)", err, domain.ErrorCode(err))
	}

	if err := db.RefuseWrites(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, "ann", "x", domain.RoleUser); err != nil {
		t.Fatal(err)
	}
	if db.Writable(ctx) == nil {
		t.Errorf("a failure stands for ProbeEvery even after a write succeeds (a full disk takes small writes)")
	}
	later(db.ProbeEvery)
	if err := db.Writable(ctx); err != nil {
		t.Errorf("once writes work again: %v", err)
	}
}
