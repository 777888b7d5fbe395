package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

// A stop while an export for evaluation is downloading, to a client that stopped reading:
// the server still ends within its grace, and what was committed is there after.
func TestServe_StopDuringAnExport(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	long := strings.Repeat("a long message to make the export large ", 120) // about 5 KB
	for range 600 {
		c, err := db.CreateConversation(bg, 0, "event-planner", "c", "")
		if err != nil {
			t.Fatal(err)
		}
		// A message of no run: nothing for the agents to do when the server starts.
		if _, err := db.AppendEvent(bg, domain.Event{ConversationID: c.ID, Kind: domain.EventUserMessage, Author: "local", Text: long}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, nil, env(map[string]string{"PARLEY_ADDR": "127.0.0.1:0", "PARLEY_DB": dbPath, "PARLEY_AUTH": "none"}), stdio{out: io.Discard, err: &logs})
	}()
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no listening line in logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(base + "/review/export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export = %d", resp.StatusCode)
	}
	first := make([]byte, 4096)
	if _, err := io.ReadFull(resp.Body, first); err != nil || !strings.Contains(string(first), `"schema":"parley.eval/1"`) {
		t.Fatalf("the export's start = %q, %v", first[:200], err)
	}
	// The client reads no more: the server's writes block. Then the stop.
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v after the stop", err)
		}
		if took := time.Since(start); took > shutdownGrace+2*time.Second {
			t.Errorf("the stop took %s; the grace is %s", took, shutdownGrace)
		}
	case <-time.After(shutdownGrace + 5*time.Second):
		t.Fatalf("no stop within the grace (%s) while an export was downloading", shutdownGrace)
	}
	db, err = store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if list, _, err := db.ListConversations(bg, domain.ConversationFilter{Limit: 1000}); err != nil || len(list) != 600 {
		t.Errorf("after the stop: %d conversations, %v; want 600", len(list), err)
	}
}
