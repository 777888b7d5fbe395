package store_test

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/migrations"
	"github.com/parley-chat/parley/store/storetest"
)

// oldDB makes a database at the given migrations only, as an older Parley left it, and
// returns its path, a function that runs SQL on it, and one that closes it (before Parley
// opens it).
func oldDB(t *testing.T, migrated ...string) (string, func(q string, args ...any), func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`)
	for _, name := range migrated {
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00Z')`, name)
	}
	return path, exec, func() { raw.Close() }
}

// A database from before accounts (payloads stored as BLOBs, one of them malformed) opens:
// its messages and answers are found by search, and its conversations belong to the first
// account made.
func TestDB_MigrateAccounts_OldData(t *testing.T) {
	path, exec, done := oldDB(t, "0001_init.sql", "0002_a2a_tasks.sql", "0003_documents.sql")
	now := "2026-11-01T09:00:00.000000000Z"
	exec(`INSERT INTO conversations (id, agent, title, created_at, updated_at) VALUES (1, 'x', 'old one', ?, ?)`, now, now)
	exec(`INSERT INTO runs (id, conversation_id, state, created_at, updated_at) VALUES (1, 1, 'done', ?, ?)`, now, now)
	exec(`INSERT INTO events (conversation_id, run_id, kind, payload, created_at) VALUES (1, 1, 'user_message', ?, ?)`, []byte(`{"text":"the quarterly offsite in Zürich"}`), now)
	exec(`INSERT INTO events (conversation_id, run_id, kind, payload, created_at) VALUES (1, 1, 'agent_message', ?, ?)`, []byte(`{"text":`), now)
	exec(`INSERT INTO questions (id, conversation_id, run_id, asker, spec, state, created_at) VALUES (1, 1, 1, 'a', '{}', 'answered', ?)`, now)
	exec(`INSERT INTO answers (question_id, outcome, vals, created_at) VALUES (1, 'answered', ?, ?)`, []byte(`{"venue":"Glasshouse","n":3}`), now)
	done()
	db := storetest.Open(t, path)
	for _, q := range []string{"zurich", "glasshouse"} {
		if hits, _, err := db.Search(ctx, q, domain.ConversationFilter{}); err != nil || len(hits) != 1 {
			t.Errorf("search %q after the migration = %+v, %v", q, hits, err)
		}
	}
	ann, err := db.CreateUser(ctx, "ann", "h", "")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := db.Conversation(ctx, 1); c.UserID != ann.ID {
		t.Errorf("the old conversation belongs to %d, want the first account", c.UserID)
	}
}

// Accounts from before name keys that already look alike both open and sign in as before;
// no new name like theirs is taken, and names unlike any are.
func TestDB_MigrateNameKeys_LookAlikesFromBefore(t *testing.T) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	for _, n := range names {
		if n < "0012" {
			before = append(before, n)
		}
	}
	path, exec, done := oldDB(t, before...)
	for _, name := range []string{"root", "rооt", "ann"} { // the second with Cyrillic о
		exec(`INSERT INTO users (name, role, created_at) VALUES (?, 'user', '2026-01-01T00:00:00Z')`, name)
	}
	done()
	db := storetest.Open(t, path)
	for _, name := range []string{"root", "rооt", "ann"} {
		if u, _, err := db.UserByName(ctx, name); err != nil || u.Name != name {
			t.Errorf("old account %q = %+v, %v", name, u, err)
		}
	}
	for _, name := range []string{"r00t", "RООT", "аnn"} {
		if _, err := db.CreateUser(ctx, name, "h", ""); domain.ErrorCode(err) != domain.ECONFLICT {
			t.Errorf("new %q: got %v, want ECONFLICT", name, err)
		}
	}
	if _, err := db.CreateUser(ctx, "bob", "h", ""); err != nil {
		t.Errorf("bob: %v", err)
	}
}

// A database from before the live column keeps knowing which pending questions are live
// (held on an agent's connection): after the migration the restart's sweep finds exactly
// those, and not a question that waits for its answer between steps.
func TestDB_MigrateQuestionLive_FromSpec(t *testing.T) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	for _, n := range names {
		if n < "0022" {
			before = append(before, n)
		}
	}
	path, exec, done := oldDB(t, before...)
	now := "2026-11-01T09:00:00.000000000Z"
	exec(`INSERT INTO users (id, name, name_key, role, created_at) VALUES (1, 'ann', 'ann', 'user', ?)`, now)
	exec(`INSERT INTO conversations (id, user_id, agent, title, created_at, updated_at) VALUES (1, 1, 'x', 'old one', ?, ?)`, now, now)
	exec(`INSERT INTO runs (id, conversation_id, state, created_at, updated_at) VALUES (1, 1, 'running', ?, ?)`, now, now)
	exec(`INSERT INTO questions (id, conversation_id, run_id, asker, spec, state, created_at) VALUES (1, 1, 1, 'a', '{"id":1,"live":true}', 'pending', ?)`, now)
	exec(`INSERT INTO questions (id, conversation_id, run_id, asker, spec, state, created_at) VALUES (2, 1, 1, 'a', '{"id":2}', 'pending', ?)`, now)
	done()
	db := storetest.Open(t, path)
	live, err := db.LiveQuestions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0] != 1 {
		t.Errorf("live questions after the migration = %v, want [1]", live)
	}
}

// The conversations of questions asked over MCP, made when they were those of a made-up
// agent "parley:mcp", become of kind inbound and of no agent; the others stay chats.
func TestDB_MigrateConversationKind_FromAgentName(t *testing.T) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	for _, n := range names {
		if n < "0023" {
			before = append(before, n)
		}
	}
	path, exec, done := oldDB(t, before...)
	now := "2026-11-01T09:00:00.000000000Z"
	exec(`INSERT INTO users (id, name, name_key, role, created_at) VALUES (1, 'ann', 'ann', 'user', ?)`, now)
	exec(`INSERT INTO conversations (id, user_id, agent, title, nonce, created_at, updated_at) VALUES (1, 1, 'parley:mcp', 'Questions from Claude Code', 'parley:mcp:Claude Code', ?, ?)`, now, now)
	exec(`INSERT INTO conversations (id, user_id, agent, title, created_at, updated_at) VALUES (2, 1, 'planner', 'A party', ?, ?)`, now, now)
	done()
	db := storetest.Open(t, path)
	for _, want := range []domain.Conversation{{ID: 1, Kind: domain.KindInbound}, {ID: 2, Kind: domain.KindChat, Agent: "planner"}} {
		c, err := db.Conversation(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != want.Kind || c.Agent != want.Agent {
			t.Errorf("conversation %d after the migration: kind %q, agent %q; want %q, %q", want.ID, c.Kind, c.Agent, want.Kind, want.Agent)
		}
	}
	again, err := db.CreateInboundConversation(ctx, 1, "Questions from Claude Code", "parley:mcp:Claude Code")
	if err != nil || again.ID != 1 {
		t.Errorf("the person's conversation with the client is found again by its nonce: got %d, %v", again.ID, err)
	}
}

// The channels and the outbox are made again by 0024 (SQLite cannot change a CHECK): every
// channel and every delivery waiting survives, and the email addresses in use before it
// count as confirmed.
func TestDB_MigrateChannelsReach_KeepsChannelsAndOutbox(t *testing.T) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	for _, n := range names {
		if n < "0024" {
			before = append(before, n)
		}
	}
	path, exec, done := oldDB(t, before...)
	now := "2026-11-01T09:00:00.000000000Z"
	exec(`INSERT INTO users (id, name, name_key, role, created_at) VALUES (1, 'ann', 'ann', 'user', ?)`, now)
	exec(`INSERT INTO conversations (id, user_id, agent, title, created_at, updated_at) VALUES (1, 1, 'x', 'old one', ?, ?)`, now, now)
	exec(`INSERT INTO runs (id, conversation_id, state, created_at, updated_at) VALUES (1, 1, 'waiting', ?, ?)`, now, now)
	exec(`INSERT INTO questions (id, conversation_id, run_id, asker, spec, state, created_at) VALUES (1, 1, 1, 'a', '{"id":1,"message":"Ship it?"}', 'pending', ?)`, now)
	exec(`INSERT INTO channels (id, user_id, kind, target, created_at) VALUES (1, 1, 'webhook', 'https://hooks.example/a', ?)`, now)
	exec(`INSERT INTO channels (id, user_id, kind, target, created_at, last_error) VALUES (2, 1, 'email', 'ann@example.com', ?, 'SMTP down')`, now)
	exec(`INSERT INTO notifications (id, channel_id, question_id, reason, next_at, created_at) VALUES (1, 1, 1, 'asked', ?, ?)`, now, now)
	exec(`INSERT INTO notifications (id, channel_id, question_id, reason, attempts, next_at, created_at) VALUES (2, 2, 1, 'asked', 3, ?, ?)`, now, now)
	done()
	db := storetest.Open(t, path)
	chs, err := db.Channels(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(chs) != 2 || chs[1].Target != "ann@example.com" || chs[1].Unconfirmed() || chs[1].LastError != "SMTP down" {
		t.Fatalf("channels after the migration: %+v", chs)
	}
	due, err := db.DueNotifications(ctx, time.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 || due[1].Attempts != 3 || due[0].Question.Message != "Ship it?" {
		t.Fatalf("deliveries waiting after the migration: %+v", due)
	}
	// The outbox still refers to the channels: removing one takes its deliveries.
	if err := db.RemoveChannel(ctx, 1, 1, 0, "ann"); err != nil {
		t.Fatal(err)
	}
	if due, _ = db.DueNotifications(ctx, time.Now(), 10); len(due) != 1 {
		t.Fatalf("after removing a channel, %d deliveries wait, want 1", len(due))
	}
}
