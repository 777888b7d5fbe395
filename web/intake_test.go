package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/intake"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/web"
)

// javaTrace is a long stack trace, as people paste it under their question.
func javaTrace(frames int) string {
	var b strings.Builder
	b.WriteString("Exception in thread \"main\" java.lang.IllegalStateException: pool exhausted after 30000ms\n")
	for i := 0; i < frames; i++ {
		fmt.Fprintf(&b, "\tat com.example.orders.repo.OrderRepository.load%d(OrderRepository.java:%d)\n", i, 100+i)
	}
	b.WriteString("Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available\n")
	return b.String()
}

func TestIntake_LargeMessageIsSplitBeforeTheAgentReadsIt(t *testing.T) {
	db := newDB(t)
	a := &scripted{name: "recorder", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if in.Trigger == domain.TriggerMessage && in.StepID == 1 {
			_, err := out.Ask(domain.Question{Message: "Which service?", Fields: []domain.Field{{Name: "service", Kind: domain.KindText, Required: true}}})
			return err
		}
		return out.Text("ok")
	}}
	var logs logBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	runner := runner.New(runner.Options{Ledger: db, Agents: []domain.Agent{a}, Now: db.Now, Logger: log,
		Analyzer: intake.New(intake.Options{ContextWindow: 8192})})
	srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runner, Heartbeat: time.Hour, Logger: log})
	ts := newTestServerFrom(t, db, srv)

	question := "Why does the order service run out of connections since the deploy?"
	raw := question + "\n\n" + javaTrace(400)
	path := ts.start(t, "recorder", raw)
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)

	steps := a.inputs()
	msg := lastUserMessage(steps[0].History)
	if msg.Text != raw {
		t.Fatal("the message as written was not kept")
	}
	if msg.Intent != question || len(msg.Documents) != 1 || msg.Documents[0].Label != domain.LabelUserContext {
		t.Fatalf("the agent got intent %q with documents %+v", msg.Intent, msg.Documents)
	}
	if !strings.HasPrefix(msg.Prompt(), question+"\n\nAVAILABLE_DOCUMENTS:\n- id 1: ") {
		t.Fatalf("prompt = %.200q", msg.Prompt())
	}
	doc, err := steps[0].Documents.Document(context.Background(), msg.Documents[0].ID)
	if err != nil || !strings.Contains(string(doc.Content), "Caused by: java.sql.SQLTransientConnectionException") || !strings.HasPrefix(string(doc.Content), "Exception in thread") {
		t.Fatalf("document = %.100q, %v", doc.Content, err)
	}
	if steps[0].Language != "en" {
		t.Fatalf("language = %q, want en", steps[0].Language)
	}
	conv, _ := db.Conversation(context.Background(), id)
	if conv.Language != "en" {
		t.Fatalf("conversation language = %q", conv.Language)
	}

	// The analysis is logged with its sizes and time, never its content.
	line := logs.line(t, "msg=intake ")
	for _, want := range []string{fmt.Sprintf("input_bytes=%d", len(raw)), fmt.Sprintf("intent_bytes=%d", len(question)),
		"documents=1", "via=builtin", "language=en", "took="} {
		if !strings.Contains(line, want) {
			t.Errorf("intake log %q lacks %q", line, want)
		}
	}
	if strings.Contains(logs.String(), "connections") || strings.Contains(logs.String(), "HikariPool") {
		t.Errorf("the log holds the message's content:\n%s", logs.String())
	}

	_, page := ts.get(t, path)
	for _, want := range []string{"Why does the order service", "Show all (404 lines)", msg.Documents[0].Name, "What the agent was given"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	// The resume sees the same intake; it runs once per message.
	code, body, _ := ts.post(t, "/questions/1/answer", url.Values{"service": {"orders"}})
	if code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	steps = a.inputs()
	if m := lastUserMessage(steps[1].History); m.Intent != question || len(m.Documents) != 1 {
		t.Fatalf("resume got intent %q, %d documents", m.Intent, len(m.Documents))
	}
	if n := countKind(t, ts, id, domain.EventIntake); n != 1 {
		t.Fatalf("%d intake events, want 1", n)
	}

	// A short message passes whole: no document, the agent reads it as written.
	if code, body, _ := ts.post(t, path+"/messages", url.Values{"text": {"Thanks, that helps."}}); code != 200 {
		t.Fatalf("send = %d %s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	steps = a.inputs()
	short := lastUserMessage(steps[len(steps)-1].History)
	if short.Prompt() != "Thanks, that helps." || len(short.Documents) != 0 {
		t.Fatalf("short message reached the agent as %q with %d documents", short.Prompt(), len(short.Documents))
	}
}

// logBuffer collects a server's log, safe for its goroutines and the test to share.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// line returns the first logged line holding s.
func (b *logBuffer) line(t *testing.T, s string) string {
	t.Helper()
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no log line holds %q:\n%s", s, b.String())
	return ""
}

func (a *scripted) inputs() []domain.StepInput {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]domain.StepInput(nil), a.calls...)
}

func lastUserMessage(history []domain.Event) domain.Event {
	var m domain.Event
	for _, ev := range history {
		if ev.Kind == domain.EventUserMessage {
			m = ev
		}
	}
	return m
}

func countKind(t *testing.T, ts *testServer, id int64, kind domain.EventKind) int {
	t.Helper()
	evs, err := ts.db.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}
