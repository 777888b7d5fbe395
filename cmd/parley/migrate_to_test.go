package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

func TestRunMigrateTo(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "p.db")
	if _, err := runCLI(t, dbPath, "", "user", "add", "ann"); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ann, _, _ := db.UserByName(ctx, "ann")
	c, _ := db.CreateConversation(ctx, ann.ID, "tester", "moving day", "")
	if _, err := db.StartRun(ctx, c.ID, domain.Message{Text: "pack the boxes", Author: "ann"}); err != nil {
		t.Fatal(err)
	}
	target := storetest.Schema(t)

	t.Run("RefusedWhileServed", func(t *testing.T) {
		// db holds the file as parley serve would.
		_, err := runCLI(t, dbPath, "", "migrate-to", target)
		if err == nil || !strings.Contains(err.Error(), "is in use by") || !strings.Contains(err.Error(), "stop that one first") {
			t.Fatalf("migrate-to while the database is open = %v, want it refused", err)
		}
	})
	db.Close()

	t.Run("OK", func(t *testing.T) {
		out, err := runCLI(t, dbPath, "", "migrate-to", target)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`(?m)^  users: +1$`, `(?m)^  conversations: +1$`, `(?m)^  events: +[1-9]`, `(?m)^  parley serve --db '` + regexp.QuoteMeta(target) + `'$`} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("output lacks %s:\n%s", want, out)
			}
		}
		to := storetest.Open(t, target)
		if got, err := to.Conversation(ctx, c.ID); err != nil || got.Title != "moving day" || got.Owner != "ann" {
			t.Errorf("Conversation on PostgreSQL = %+v, %v", got, err)
		}
		if hits, _, err := to.Search(ctx, "boxes", domain.ConversationFilter{}); err != nil || len(hits) != 1 {
			t.Errorf("Search on PostgreSQL = %+v, %v", hits, err)
		}
	})

	t.Run("RefusedIntoANonEmptyDatabase", func(t *testing.T) {
		out, err := runCLI(t, dbPath, "", "migrate-to", "--db", dbPath, target)
		if err == nil || !strings.Contains(err.Error(), "not empty (users: 1, conversations: 1, runs: 1, events: 2, steps: 1): copy into a new, empty database; nothing was changed") || out != "" {
			t.Fatalf("a second migrate-to = %q, %v; want it refused, saying why", out, err)
		}
	})
}

// Arguments are checked before any database is opened.
func TestRunMigrateTo_Arguments(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	const target = "postgres://nobody@127.0.0.1:1/none"
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"NoTarget", []string{"migrate-to"}, "name the PostgreSQL database"},
		{"NotPostgres", []string{"migrate-to", "other.db"}, "is a postgres:// URL"},
		{"NoSuchFile", []string{"migrate-to", "--db", filepath.Join(t.TempDir(), "none.db"), target}, "no SQLite database at"},
		{"TwoTargets", []string{"migrate-to", target, target}, "unexpected argument"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := runCLI(t, dbPath, "", tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v = %v, want %q", tt.args, err, tt.want)
			}
		})
	}
}
