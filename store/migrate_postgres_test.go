package store_test

import (
	"database/sql"
	"io/fs"
	"path"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/migrations"
	"github.com/parley-chat/parley/store/storetest"
)

// A PostgreSQL database from before the live column and conversation kinds, as an older
// Parley left it: after the migrations its live question is found by the restart's sweep,
// its conversation of questions asked over MCP is of kind inbound and of no agent, and a
// chat stays a chat.
func TestDB_MigratePostgres_LiveAndKind_OldData(t *testing.T) {
	url := storetest.Schema(t)
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`)
	names, err := fs.Glob(migrations.Postgres, "postgres/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if path.Base(name) >= "0007" {
			continue
		}
		body, err := fs.ReadFile(migrations.Postgres, name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO schema_migrations VALUES ($1, '2026-01-01T00:00:00Z')`, path.Base(name))
	}
	now := "2026-11-01T09:00:00.000000000Z"
	exec(`INSERT INTO users (id, name, name_key, role, created_at) VALUES (1, 'ann', 'ann', 'user', $1)`, now)
	exec(`INSERT INTO conversations (id, user_id, agent, title, nonce, created_at, updated_at) VALUES (1, 1, 'parley:mcp', 'Questions from Claude Code', 'parley:mcp:Claude Code', $1, $1)`, now)
	exec(`INSERT INTO conversations (id, user_id, agent, title, created_at, updated_at) VALUES (2, 1, 'planner', 'A party', $1, $1)`, now)
	exec(`INSERT INTO runs (id, conversation_id, state, created_at, updated_at) VALUES (1, 2, 'running', $1, $1)`, now)
	exec(`INSERT INTO questions (id, conversation_id, run_id, asker, spec, state, created_at) VALUES (1, 2, 1, 'a', '{"id":1,"live":true}', 'pending', $1)`, now)
	exec(`INSERT INTO questions (id, conversation_id, run_id, asker, spec, state, created_at) VALUES (2, 2, 1, 'a', '{"id":2}', 'pending', $1)`, now)
	raw.Close()

	db := storetest.Open(t, url)
	live, err := db.LiveQuestions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0] != 1 {
		t.Errorf("live questions after the migration = %v, want [1]", live)
	}
	if q, err := db.Question(ctx, 1); err != nil || !q.Live {
		t.Errorf("question 1 after the migration: live %v, %v; want live", q.Live, err)
	}
	for _, want := range []domain.Conversation{{ID: 1, Kind: domain.KindInbound}, {ID: 2, Kind: domain.KindChat, Agent: "planner"}} {
		c, err := db.Conversation(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != want.Kind || c.Agent != want.Agent {
			t.Errorf("conversation %d after the migration: kind %q, agent %q; want %q, %q", want.ID, c.Kind, c.Agent, want.Kind, want.Agent)
		}
	}
}
