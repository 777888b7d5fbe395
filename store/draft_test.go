package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// batches counts the rows of draft_batches, read as another process would.
func batches(t *testing.T, path string) int {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+path+"?mode=ro"
	if store.IsPostgres(path) {
		driver, dsn = "pgx", path
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM draft_batches`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDB_Drafts(t *testing.T) {
	path := storetest.Path(t)
	db := storetest.Open(t, path)
	var a, b domain.StepInput
	for _, in := range []*domain.StepInput{&a, &b} {
		c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
		step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hi", Author: "you"}))
		_, *in, _ = db.BeginStep(ctx, step)
	}
	draft := func(in domain.StepInput, msg string, at int, text string) domain.Draft {
		return domain.Draft{ConversationID: in.ConversationID, RunID: in.RunID, MessageID: msg, At: at, Text: text}
	}
	t.Run("OneRowABatch", func(t *testing.T) {
		db.SaveDrafts(ctx, []domain.Draft{draft(a, "1-1", 0, "Hello "), draft(b, "2-1", 0, "Bonjour ")})
		db.SaveDrafts(ctx, []domain.Draft{draft(a, "1-1", 6, "world")})
		if n := batches(t, path); n != 2 {
			t.Fatalf("%d batches, want 2", n)
		}
	})
	t.Run("ABatchGoesWhenNoneOfItsMessagesIsBeingWritten", func(t *testing.T) {
		db.AppendEvent(ctx, domain.Event{ConversationID: a.ConversationID, RunID: a.RunID, Kind: domain.EventAgentMessage, MessageID: "1-1", Text: "Hello world"})
		if n := batches(t, path); n != 1 {
			t.Fatalf("%d batches after a's message ended, want 1 (b's text is in the first)", n)
		}
		// b's step ends without finishing its message: its batch goes too.
		if _, err := db.FinishStep(ctx, b.StepID, nil, nil); err != nil {
			t.Fatal(err)
		}
		if n := batches(t, path); n != 0 {
			t.Fatalf("%d batches after every message ended, want 0", n)
		}
	})
}

// TestDB_Observe: every committed event reaches the observer, in commit order, with its id;
// a transaction that fails hands over nothing. (On PostgreSQL the observer hears them from
// the notifications, just after the commit.)
func TestDB_Observe(t *testing.T) {
	db := storetest.New(t)
	var mu sync.Mutex
	var seen []int64
	db.Observe(func(evs []domain.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			seen = append(seen, ev.ID)
		}
	})
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, Kind: domain.EventPlan, Plan: &domain.Plan{Title: fmt.Sprint(i)}})
		}()
	}
	wg.Wait()
	if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: 999, Kind: domain.EventPlan, Plan: &domain.Plan{}}); err == nil {
		t.Fatal("an event of a missing conversation was stored")
	}
	evs, _ := db.Events(ctx, c.ID, 0)
	var want []int64
	for _, ev := range evs {
		want = append(want, ev.ID)
	}
	observed := func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
	for deadline := time.Now().Add(10 * time.Second); len(observed()) < len(want) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := observed(); !slices.Equal(got, want) {
		t.Errorf("observed %v, want the log in order %v", got, want)
	}
}

// An old database whose log holds every streamed piece (text_delta) keeps one row per message:
// a finished message's pieces go, an unfinished one's become its drafts, and the next start
// makes it the interrupted message it was.
func TestDB_MigrateDrafts_OldDeltas(t *testing.T) {
	path, exec, done := oldDB(t, "0001_init.sql", "0002_a2a_tasks.sql", "0003_documents.sql", "0004_accounts.sql")
	now := "2026-11-01T09:00:00.000000000Z"
	exec(`INSERT INTO conversations (id, agent, title, state, created_at, updated_at) VALUES (1, 'x', 'old', 'running', ?, ?)`, now, now)
	exec(`INSERT INTO runs (id, conversation_id, state, created_at, updated_at) VALUES (1, 1, 'running', ?, ?)`, now, now)
	exec(`INSERT INTO steps (id, run_id, trigger, state, created_at, started_at) VALUES (1, 1, 'message', 'started', ?, ?)`, now, now)
	for _, e := range []struct{ kind, payload string }{
		{"user_message", `{"text":"hi"}`},
		{"text_delta", `{"message_id":"1-1","start":true,"text":"Done ","author":"Bot"}`},
		{"text_delta", `{"message_id":"1-1","text":"already.","author":"Bot"}`},
		{"agent_message", `{"message_id":"1-1","text":"Done already.","author":"Bot"}`},
		{"text_delta", `{"message_id":"1-2","start":true,"text":"Hello ","author":"Bot"}`},
		{"text_delta", `{"message_id":"1-2","text":"wor","author":"Bot"}`},
	} {
		exec(`INSERT INTO events (conversation_id, run_id, kind, payload, created_at) VALUES (1, 1, ?, ?, ?)`, e.kind, e.payload, now)
	}
	done()

	db := storetest.Open(t, path)
	if _, err := db.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	evs, _ := db.Events(ctx, 1, 0)
	var got []string
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("%s %s %q interrupted=%v", ev.Kind, ev.MessageID, ev.Text, ev.Interrupted))
	}
	want := []string{`user_message  "hi" interrupted=false`, `agent_message 1-1 "Done already." interrupted=false`,
		`agent_message 1-2 "Hello wor" interrupted=true`, `run_state  "" interrupted=false`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log after the migration and recovery:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := batches(t, path); n != 0 {
		t.Errorf("%d batches left after recovery", n)
	}
}

// Crash semantics with the real runner: a reply being written is stored in batches, and a
// crash (the database as it stands, taken mid-reply) loses at most the last batch: the
// message comes back interrupted with the text stored, and Retry runs the agent again.
func TestRunner_CrashKeepsTheStoredText(t *testing.T) {
	dir := t.TempDir()
	db := storetest.Open(t, filepath.Join(dir, "p.db"))
	wrote := make(chan string, 1)
	writer := &crashAgent{wrote: wrote}
	r := runner.New(runner.Options{Ledger: db, Agents: []domain.Agent{writer}, Now: db.Now, FlushEvery: 10 * time.Millisecond})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := r.NewConversation(ctx, "crash", domain.Message{Text: "write", Author: "you"})
	if err != nil {
		t.Fatal(err)
	}
	written := <-wrote
	// The batch reaches the database within a flush or two.
	snapshot := filepath.Join(dir, "crash.db")
	deadline := time.Now().Add(10 * time.Second)
	for batches(t, filepath.Join(dir, "p.db")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no batch was stored while the reply was written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The crash: the database exactly as committed now, as a kill -9 would leave it.
	if err := db.Snapshot(ctx, snapshot); err != nil {
		t.Fatal(err)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r.Stop(stopCtx)

	crashed := storetest.Open(t, snapshot)
	after := runner.New(runner.Options{Ledger: crashed, Agents: []domain.Agent{&crashAgent{}}, Now: crashed.Now})
	if err := after.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer after.Stop(ctx)
	conv, _ := crashed.Conversation(ctx, c.ID)
	if conv.State != domain.StateInterrupted {
		t.Fatalf("state after the crash = %q, want interrupted", conv.State)
	}
	evs, _ := crashed.Events(ctx, c.ID, 0)
	var kept string
	for _, ev := range evs {
		if ev.Kind == domain.EventAgentMessage && ev.Interrupted {
			kept = ev.Text
		}
	}
	if kept == "" || !strings.HasPrefix(written, kept) {
		t.Fatalf("kept %q, want a prefix of what was written (%d bytes)", kept, len(written))
	}
	if err := after.Retry(ctx, c.ID); err != nil {
		t.Fatalf("retry after the crash: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if conv, _ := crashed.Conversation(ctx, c.ID); conv.State == domain.StateDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retry did not finish")
		}
	}
}

// crashAgent writes a reply and, the first time, waits mid-way (until it is stopped).
type crashAgent struct{ wrote chan string }

func (*crashAgent) Info() domain.Info { return domain.Info{Name: "crash", Title: "Crash"} }

func (a *crashAgent) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	if a.wrote == nil {
		return out.Text("Written again.")
	}
	var b strings.Builder
	for i := range 50 {
		w := fmt.Sprintf("word%d ", i)
		b.WriteString(w)
		out.Text(w)
	}
	a.wrote <- b.String()
	<-ctx.Done()
	return ctx.Err()
}
