package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
	"github.com/parley-chat/parley/store"
)

// parley export --jsonl writes a line a conversation version, naming the agent's back end;
// --agent and --label filter, --since takes a date; a bad flag is said.
func TestRunExport(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, agent := range []string{"event-planner", "gone-agent"} {
		c, err := db.CreateConversation(ctx, 0, agent, "About "+agent, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartRun(ctx, c.ID, domain.Message{Text: "hello", Author: "ann"}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	out, err := runCLI(t, dbPath, "", "export", "--jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), out)
	}
	var r eval.Record
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r.Schema != eval.Schema || r.Conversation.Backend != "builtin" || len(r.Messages) != 1 {
		t.Errorf("first line = %+v, %v", r, err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || r.Conversation.Backend != "unknown" {
		t.Errorf("an agent no longer configured: backend %q, %v", r.Conversation.Backend, err)
	}
	if out, err := runCLI(t, dbPath, "", "export", "--jsonl", "--agent", "gone-agent", "--since", "2000-01-01"); err != nil || strings.Count(out, "\n") != 1 || !strings.Contains(out, "gone-agent") {
		t.Errorf("--agent gone-agent = %q, %v", out, err)
	}
	if out, err := runCLI(t, dbPath, "", "export", "--jsonl", "--label", "none"); err != nil || out != "" {
		t.Errorf("--label none = %q, %v", out, err)
	}
	if _, err := runCLI(t, dbPath, "", "export"); err == nil || !strings.Contains(err.Error(), "--jsonl") {
		t.Errorf("without --jsonl: %v", err)
	}
	if _, err := runCLI(t, dbPath, "", "export", "--jsonl", "--since", "yesterday"); err == nil || !strings.Contains(err.Error(), "a date") {
		t.Errorf("--since yesterday: %v", err)
	}
}
