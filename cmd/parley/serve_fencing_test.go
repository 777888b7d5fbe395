package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// instance is a `parley serve` of a test on a PostgreSQL database, with its log.
type instance struct {
	*liveServer
	logs *syncBuffer
}

// gatedSetup makes a fresh PostgreSQL schema with ann and her token, and a gated model (see
// gatedModel) at modelURL, opened when the test ends at the latest.
func gatedSetup(t *testing.T) (db, token string, model *gatedModel, modelURL string) {
	t.Helper()
	db = storetest.Schema(t)
	token = strings.TrimSpace(annWithToken(t, db))
	model = &gatedModel{open: make(chan struct{})}
	ms := httptest.NewServer(model)
	t.Cleanup(ms.Close)
	t.Cleanup(func() { model.once.Do(func() { close(model.open) }) })
	return db, token, model, ms.URL
}

// startInstance runs `parley serve` on the database db with the fake model at modelURL and
// the flags given, until the test ends (its log shown when the test fails).
func startInstance(t *testing.T, name, db, token, modelURL string, args ...string) *instance {
	t.Helper()
	logs := &syncBuffer{}
	cmd := serveCommand(append([]string{"--db", db}, args...)...)
	cmd.Env = append(cmd.Env, "PARLEY_OPENAI_BASE_URL="+modelURL+"/v1", "PARLEY_OPENAI_MODEL=fake")
	url, err := startServe(cmd, logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, logs.String())
		}
	})
	return &instance{liveServer: &liveServer{cmd: cmd, URL: url, Token: token}, logs: logs}
}

// startChat starts a conversation with the fake model on l.
func startChat(t *testing.T, l *instance, text string) int64 {
	t.Helper()
	var c api.ConversationCreated
	if code := l.api(t, http.MethodPost, "/conversations", api.NewConversation{Agent: "fake", Text: text}, &c); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	return c.Conversation.ID
}

// conversationState reads a conversation's state on l.
func conversationState(t *testing.T, l *instance, id int64) string {
	t.Helper()
	var c struct {
		Conversation struct {
			State string `json:"state"`
		} `json:"conversation"`
	}
	if code := l.api(t, http.MethodGet, fmt.Sprintf("/conversations/%d", id), nil, &c); code != http.StatusOK {
		t.Fatalf("GET conversation %d = %d", id, code)
	}
	return c.Conversation.State
}

// TestServe_PausedInstanceIsFenced pauses an instance (SIGSTOP) in the middle of a reply,
// past its lease, lets the other take the run over, and resumes it: the paused one goes on
// writing the reply and ending its step, and nothing of it lands.
func TestServe_PausedInstanceIsFenced(t *testing.T) {
	db, token, model, modelURL := gatedSetup(t)
	a := startInstance(t, "A", db, token, modelURL, "--lease", "2s")
	b := startInstance(t, "B", db, token, modelURL, "--lease", "2s")

	id := startChat(t, a, "Tell me something")
	live := followText(t, b.liveServer, id)
	waitFor(t, "the reply A writes to reach B", func() bool { return strings.Contains(live(), "begins here") })

	a.cmd.Process.Signal(syscall.SIGSTOP)
	waitFor(t, "B to take over the run of the paused A", func() bool { return conversationState(t, b, id) == string(domain.StateInterrupted) })
	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var events, lastEvent int64
	if err := raw.QueryRow(`SELECT count(*), max(id) FROM events WHERE conversation_id = $1`, id).Scan(&events, &lastEvent); err != nil {
		t.Fatal(err)
	}

	// A wakes up: its model finishes the reply, and its step tries to store it and end.
	model.once.Do(func() { close(model.open) })
	a.cmd.Process.Signal(syscall.SIGCONT)
	waitFor(t, "A to try to end its step", func() bool {
		l := a.logs.String()
		return strings.Contains(l, "the step's end was refused") || strings.Contains(l, `msg="finish step"`)
	})

	var eventsAfter, lastAfter, drafts int64
	if err := raw.QueryRow(`SELECT count(*), max(id) FROM events WHERE conversation_id = $1`, id).Scan(&eventsAfter, &lastAfter); err != nil {
		t.Fatal(err)
	}
	if eventsAfter != events || lastAfter != lastEvent {
		t.Errorf("events of the conversation after A woke: %d up to %d; before %d up to %d: something A wrote landed", eventsAfter, lastAfter, events, lastEvent)
	}
	if err := raw.QueryRow(`SELECT count(*) FROM draft_batches`).Scan(&drafts); err != nil || drafts != 0 {
		t.Errorf("draft batches after A woke: %d, %v; want none (A's text is no longer written)", drafts, err)
	}
	if s := conversationState(t, a, id); s != string(domain.StateInterrupted) {
		t.Errorf("the conversation after A woke is %q; want interrupted, as B left it", s)
	}
	// The person goes on: Retry (here on A, back in the game) finishes the reply once.
	if code := a.api(t, http.MethodPost, fmt.Sprintf("/conversations/%d/retry", id), map[string]any{}, nil); code != http.StatusNoContent {
		t.Fatalf("retry = %d", code)
	}
	waitFor(t, "the retried run to finish", func() bool { return conversationState(t, b, id) == string(domain.StateDone) })
}

// TestServe_RenewalIsNotStuckBehindWrites holds the writes of an instance whose every pooled
// connection is taken (two steps' writes wait on conversations another session has locked)
// for longer than a third of its lease: its lease is renewed all the while, no step is
// stopped, and both replies end whole once the locks go.
func TestServe_RenewalIsNotStuckBehindWrites(t *testing.T) {
	db, token, model, modelURL := gatedSetup(t)
	a := startInstance(t, "A", db, token, modelURL, "--lease", "3s", "--db-pool", "2")

	x, y := startChat(t, a, "First"), startChat(t, a, "Second")
	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	waitFor(t, "both steps to write their replies", func() bool {
		var n int
		raw.QueryRow(`SELECT count(*) FROM steps WHERE state = 'started'`).Scan(&n)
		return n == 2
	})
	hold, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.Exec(`SELECT id FROM conversations WHERE id IN ($1, $2) FOR UPDATE`, x, y); err != nil {
		t.Fatal(err)
	}
	model.once.Do(func() { close(model.open) })
	waitFor(t, "both steps' writes to wait on the locks, taking the whole pool", func() bool {
		var n int
		raw.QueryRow(`SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&n)
		return n >= 2
	})
	// The backlog stands for more than a third of the lease, when a renewal is due.
	held := time.Now()
	waitFor(t, "two renewals' time to pass", func() bool { return time.Since(held) > 2500*time.Millisecond })
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{x, y} {
		waitFor(t, "the reply to end", func() bool { return conversationState(t, a, id) != string(domain.StateRunning) })
		if s := conversationState(t, a, id); s != string(domain.StateDone) {
			t.Errorf("conversation %d is %q after the backlog; want done", id, s)
		}
	}
	for _, bad := range []string{"renew the lease", "stopping the running steps", "taken for gone"} {
		if strings.Contains(a.logs.String(), bad) {
			t.Errorf("A logged %q during the backlog", bad)
		}
	}
}

// TestServe_StepsStopWhenTheLeaseRunsOut blocks an instance's renewals (another session
// holds its row) past its lease: its running step is stopped, whatever the renewal is
// waiting for, since another instance could take the run over; once renewals go through
// again, Retry finishes the reply.
func TestServe_StepsStopWhenTheLeaseRunsOut(t *testing.T) {
	db, token, model, modelURL := gatedSetup(t)
	a := startInstance(t, "A", db, token, modelURL, "--lease", "2s")
	id := startChat(t, a, "Tell me something")
	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	waitFor(t, "the step to write its reply", func() bool {
		var n int
		raw.QueryRow(`SELECT count(*) FROM steps WHERE state = 'started'`).Scan(&n)
		return n == 1
	})
	hold, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.Exec(`SELECT id FROM instances FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "A to stop its step as its lease runs out", func() bool {
		return strings.Contains(a.logs.String(), "stopping the running steps: this instance's lease ran out")
	})
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to end", func() bool { return conversationState(t, a, id) != string(domain.StateRunning) })
	if s := conversationState(t, a, id); s != string(domain.StateFailed) && s != string(domain.StateInterrupted) {
		t.Fatalf("the stopped run is %q; want it cut off, with Retry", s)
	}
	model.once.Do(func() { close(model.open) })
	if code := a.api(t, http.MethodPost, fmt.Sprintf("/conversations/%d/retry", id), map[string]any{}, nil); code != http.StatusNoContent {
		t.Fatalf("retry = %d", code)
	}
	waitFor(t, "the retried run to finish", func() bool { return conversationState(t, a, id) == string(domain.StateDone) })
}
