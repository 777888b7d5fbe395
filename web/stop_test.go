package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

// slowAgent writes half a reply and waits to be stopped; on a retry (or any message but the
// first) it finishes at once.
func slowAgent(written chan<- struct{}, cause chan<- error) *scripted {
	return &scripted{name: "slow", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if in.Trigger == domain.TriggerRetry || userMessages(in) > 1 {
			return out.Text("Here is the **rest**.")
		}
		out.Text("Half a reply, ")
		out.Text("still going")
		written <- struct{}{}
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}}
}

func userMessages(in domain.StepInput) int {
	n := 0
	for _, ev := range in.History {
		if ev.Kind == domain.EventUserMessage {
			n++
		}
	}
	return n
}

// slowRun starts a conversation with slowAgent and returns once half its reply is written.
func slowRun(t *testing.T) (ts *testServer, a *scripted, path string, id int64, cause chan error) {
	t.Helper()
	written := make(chan struct{}, 1)
	cause = make(chan error, 1)
	a = slowAgent(written, cause)
	ts = newTestServer(t, newDB(t), a)
	path = ts.start(t, "slow", "Write a long reply")
	id = convID(t, path)
	<-written
	return ts, a, path, id, cause
}

func TestStop(t *testing.T) {
	ts, a, path, id, cause := slowRun(t)
	code, _, _ := ts.post(t, path+"/stop", nil)
	if code != http.StatusNoContent {
		t.Fatalf("stop = %d", code)
	}
	// Stop answers once the run has ended: the state is there at once.
	if c, _ := ts.db.Conversation(context.Background(), id); c.State != domain.StateStopped {
		t.Fatalf("state after stop = %q, want stopped", c.State)
	}
	if err := <-cause; !errors.Is(err, domain.ErrStopped) {
		t.Errorf("the agent was cut off by %v, want ErrStopped", err)
	}
	_, page := ts.get(t, path)
	for _, want := range []string{"Half a reply, still going", ">stopped</span>", "The agent was stopped.", ">Retry</button>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the stopped page lacks %q", want)
		}
	}
	// Retry goes on from there: the agent sees what it wrote, marked stopped.
	if code, _, _ := ts.post(t, path+"/retry", nil); code != http.StatusNoContent {
		t.Fatalf("retry = %d", code)
	}
	ts.waitState(t, id, domain.StateDone)
	a.mu.Lock()
	last := a.calls[len(a.calls)-1]
	a.mu.Unlock()
	var partial *domain.Event
	for i := range last.History {
		if ev := last.History[i]; ev.Kind == domain.EventAgentMessage {
			partial = &ev
		}
	}
	if partial == nil || partial.Text != "Half a reply, still going" || !partial.Stopped || !partial.Interrupted {
		t.Errorf("the retry's history holds %+v, want the stopped partial reply", partial)
	}
	_, page = ts.get(t, path)
	if !strings.Contains(page, "Here is the <strong>rest</strong>.") {
		t.Error("after the retry the page lacks the rest of the reply")
	}
	// Stopping nothing is harmless.
	if code, _, _ := ts.post(t, path+"/stop", nil); code != http.StatusNoContent {
		t.Errorf("stop with nothing running = %d", code)
	}
}

// runLog is the conversation's log as a person follows it: who wrote what, and the run's states.
func runLog(t *testing.T, ts *testServer, id int64) string {
	t.Helper()
	evs, err := ts.db.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case domain.EventUserMessage:
			got = append(got, "person: "+ev.Text)
		case domain.EventAgentMessage:
			got = append(got, fmt.Sprintf("agent: %s (stopped %v)", ev.Text, ev.Stopped))
		case domain.EventRunState:
			got = append(got, "state: "+string(ev.State))
		}
	}
	return strings.Join(got, "\n")
}

// A message sent while the agent writes waits, shown as queued; Send now stops the reply
// and sends it.
func TestSendWhileRunningIsQueued(t *testing.T) {
	ts, _, path, id, _ := slowRun(t)
	code, body, _ := ts.post(t, path+"/messages", url.Values{"text": {"Actually, something shorter"}})
	if code != http.StatusOK || !strings.Contains(body, `id="composer-nonce"`) {
		t.Fatalf("send while running = %d %s", code, body)
	}
	_, page := ts.get(t, path)
	for _, want := range []string{`class="msg user queued"`, "Actually, something shorter", "Will be sent when the agent finishes.", ">Remove</button>", ">Send now</button>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q while the message waits", want)
		}
	}
	if c, _ := ts.db.Conversation(context.Background(), id); c.State != domain.StateRunning {
		t.Fatalf("state = %q: the queued message stopped the reply", c.State)
	}
	if code, _, _ := ts.post(t, path+"/queued/send", url.Values{}); code != http.StatusNoContent {
		t.Fatalf("send now = %d", code)
	}
	ts.waitState(t, id, domain.StateDone)
	want := strings.Join([]string{"person: Write a long reply", "state: running", "agent: Half a reply, still going (stopped true)", "state: stopped",
		"person: Actually, something shorter", "state: running", "agent: Here is the **rest**. (stopped false)", "state: done"}, "\n")
	if got := runLog(t, ts, id); got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
	if _, page := ts.get(t, path); strings.Contains(page, "Will be sent when the agent finishes.") {
		t.Error("the page still shows the message queued once sent")
	}
}

// Queued messages go, together and in order, when the agent finishes; one removed does not.
func TestQueuedMessagesGoWhenTheAgentFinishes(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	a := &scripted{name: "gate", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if userMessages(in) == 1 {
			started <- struct{}{}
			<-release
			return out.Text("First answer.")
		}
		return out.Text(fmt.Sprintf("Answer to %d messages.", userMessages(in)))
	}}
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "gate", "First")
	id := convID(t, path)
	<-started
	for _, m := range []string{"Second", "Third", "Fourth"} {
		if code, body, _ := ts.post(t, path+"/messages", url.Values{"text": {m}}); code != http.StatusOK || strings.Contains(body, `class="error" role="alert">T`) {
			t.Fatalf("send %q = %d %s", m, code, body)
		}
	}
	queued, _ := ts.db.Queued(context.Background(), id)
	if len(queued) != 3 {
		t.Fatalf("queued = %+v, want 3", queued)
	}
	if code, _, _ := ts.post(t, fmt.Sprintf("%s/queued/%d/remove", path, queued[1].ID), url.Values{}); code != http.StatusNoContent {
		t.Fatalf("remove = %d", code)
	}
	close(release)
	ts.waitState(t, id, domain.StateDone)
	want := strings.Join([]string{"person: First", "state: running", "agent: First answer. (stopped false)", "state: done",
		"person: Second", "person: Fourth", "state: running", "agent: Answer to 3 messages. (stopped false)", "state: done"}, "\n")
	deadline := time.Now().Add(10 * time.Second)
	for got := runLog(t, ts, id); got != want; got = runLog(t, ts, id) {
		if time.Now().After(deadline) {
			t.Fatalf("log:\n%s\nwant:\n%s", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hangingModel is an OpenAI-compatible endpoint that streams a few words, then waits until
// Parley gives up the request, and tells when it does.
type hangingModel struct{ cancelled chan struct{} }

func (m hangingModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, piece := range []string{"The first ", "words"} {
		j, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": piece}}}})
		fmt.Fprintf(w, "data: %s\n\n", j)
		w.(http.Flusher).Flush()
	}
	select {
	case <-r.Context().Done():
		close(m.cancelled)
	case <-time.After(30 * time.Second):
	}
}

func TestStop_CancelsTheModelRequest(t *testing.T) {
	model := hangingModel{cancelled: make(chan struct{})}
	srv := httptest.NewServer(model)
	defer srv.Close()
	a, err := openai.New(openai.Config{Name: "gpt", Title: "GPT", BaseURL: srv.URL + "/v1", Model: "fake", AllowQuestions: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "gpt", "Tell me a long story")
	id := convID(t, path)
	// Wait for the words on the stream, as a person would before clicking Stop.
	ts.readSSE(t, path+"/stream?after=0", "", func(evs []sseEvent) bool {
		return strings.Contains(evs[len(evs)-1].data(), "words")
	})
	if code, _, _ := ts.post(t, path+"/stop", nil); code != http.StatusNoContent {
		t.Fatalf("stop = %d", code)
	}
	select {
	case <-model.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the request to the model went on after Stop")
	}
	ts.waitState(t, id, domain.StateStopped)
	_, page := ts.get(t, path)
	if !strings.Contains(page, "The first words") || !strings.Contains(page, ">stopped</span>") {
		t.Error("the page lacks the stopped partial reply")
	}
}
