package store_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// filledDB makes a closed Parley database at a new path, holding conversations with
// messages in every page the tests damage.
func filledDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		c, err := db.CreateConversation(ctx, 0, "event-planner", fmt.Sprintf("party %d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, Kind: domain.EventUserMessage, Text: strings.Repeat(fmt.Sprintf("message %d ", j), 20), Author: "Ann"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil { // the last connection checkpoints: all is in the file
		t.Fatal(err)
	}
	return path
}

// A file with pages overwritten is refused at start, unchanged, with what SQLite found and
// how to restore it; SkipCheck opens it all the same.
func TestOpen_RefusesADamagedFile(t *testing.T) {
	storetest.SQLiteOnly(t)
	path := filledDB(t)
	storetest.Damage(t, path, "conversations", "events")
	before := files(t, filepath.Dir(path))

	db, err := store.Open(ctx, path)
	if err == nil {
		db.Close()
		t.Fatal("a damaged file was opened")
	}
	for _, want := range []string{
		"database " + path + " is damaged: SQLite's quick_check found: Tree ", // its first finding, quoted
		"Restore your latest backup (see \"Your data\" in docs/operations.md)",
		"sqlite3 " + path + " .recover | sqlite3 recovered.db",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open = %v\nwant %q in it", err, want)
		}
	}
	if after := files(t, filepath.Dir(path)); !maps.Equal(before, after) {
		t.Errorf("the directory changed: %v, then %v", before, after)
	}

	// A command beside a server does not check (the server did); SkipCheck does not either.
	for _, opts := range []store.Options{{Shared: true}, {SkipCheck: true}} {
		db, err := store.OpenWith(ctx, path, opts)
		if err != nil {
			t.Fatalf("OpenWith(%+v): %v", opts, err)
		}
		db.Close()
	}
}

// A file damaged under a running Parley: the write or read that meets the damage says so, as
// an EUNAVAILABLE error with the way to restore, and from then on the health check reports
// it, whatever succeeds meanwhile.
func TestDB_DamagedWhileOpen(t *testing.T) {
	storetest.SQLiteOnly(t)
	isDamage := func(err error) bool {
		return domain.ErrorCode(err) == domain.EUNAVAILABLE &&
			strings.Contains(domain.ErrorMessage(err), "Parley's database file is damaged (database disk image is malformed)") &&
			strings.Contains(domain.ErrorMessage(err), "restore the file from your latest backup")
	}
	open := func(t *testing.T) *store.DB {
		t.Helper()
		path := filledDB(t)
		db := storetest.Open(t, path) // a fresh process: nothing of the tables in its caches
		if err := db.Writable(ctx); err != nil {
			t.Fatalf("before the damage: %v", err)
		}
		storetest.Damage(t, path, "conversations")
		return db
	}

	t.Run("a write", func(t *testing.T) {
		db := open(t)
		_, err := db.CreateConversation(ctx, 0, "event-planner", "one more", "")
		if !isDamage(err) {
			t.Fatalf("CreateConversation = %v (%s), want the damage", err, domain.ErrorCode(err))
		}
		if err := db.Writable(ctx); !isDamage(err) {
			t.Errorf("Writable = %v, want the damage", err)
		}
		later := time.Now().Add(time.Hour) // past ProbeEvery of every outcome
		db.Now = func() time.Time { return later }
		if err := db.Writable(ctx); !isDamage(err) {
			t.Errorf("an hour later, Writable = %v, want the damage still", err)
		}
	})

	t.Run("a read", func(t *testing.T) {
		db := open(t)
		_, _, err := db.ListConversations(ctx, domain.ConversationFilter{})
		if err == nil {
			t.Fatal("ListConversations read a damaged table")
		}
		if err := db.Writable(ctx); err != nil {
			t.Fatalf("before the failure is handed back, Writable = %v", err)
		}
		if got := db.Failed(err); !isDamage(got) {
			t.Errorf("Failed(%v) = %v, want the damage", err, got)
		}
		if err := db.Writable(ctx); !isDamage(err) {
			t.Errorf("Writable = %v, want the damage", err)
		}
	})

	t.Run("another failure", func(t *testing.T) {
		db := storetest.New(t)
		if err := fmt.Errorf("oops"); db.Failed(err) != err {
			t.Errorf("Failed changed an error that is no damage")
		}
		if err := db.Writable(ctx); err != nil {
			t.Errorf("Writable = %v", err)
		}
	})
}
