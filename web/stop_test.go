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

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/agent/openai"
)

// slowAgent writes half a reply and waits to be stopped; on a retry (or any message but the
// first) it finishes at once.
func slowAgent(written chan<- struct{}, cause chan<- error) *scripted {
	return &scripted{name: "slow", step: func(ctx context.Context, in agent.StepInput, out agent.Output) error {
		if in.Trigger == agent.TriggerRetry || userMessages(in) > 1 {
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

func userMessages(in agent.StepInput) int {
	n := 0
	for _, ev := range in.History {
		if ev.Kind == agent.EventUserMessage {
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
	if c, _ := ts.db.Conversation(context.Background(), id); c.State != agent.StateStopped {
		t.Fatalf("state after stop = %q, want stopped", c.State)
	}
	if err := <-cause; !errors.Is(err, agent.ErrStopped) {
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
	ts.waitState(t, id, agent.StateDone)
	a.mu.Lock()
	last := a.calls[len(a.calls)-1]
	a.mu.Unlock()
	var partial *agent.Event
	for i := range last.History {
		if ev := last.History[i]; ev.Kind == agent.EventAgentMessage {
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

func TestSendWhileRunningStopsTheReply(t *testing.T) {
	ts, _, path, id, _ := slowRun(t)
	code, body, _ := ts.post(t, path+"/messages", url.Values{"text": {"Actually, something shorter"}})
	if code != http.StatusOK || !strings.Contains(body, `id="composer"`) {
		t.Fatalf("send while running = %d %s", code, body)
	}
	ts.waitState(t, id, agent.StateDone)
	evs, _ := ts.db.Events(context.Background(), id, 0)
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case agent.EventUserMessage:
			got = append(got, "person: "+ev.Text)
		case agent.EventAgentMessage:
			got = append(got, fmt.Sprintf("agent: %s (stopped %v)", ev.Text, ev.Stopped))
		case agent.EventRunState:
			got = append(got, "state: "+string(ev.State))
		}
	}
	want := []string{"person: Write a long reply", "state: running", "agent: Half a reply, still going (stopped true)", "state: stopped",
		"person: Actually, something shorter", "state: running", "agent: Here is the **rest**. (stopped false)", "state: done"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
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
	ts.waitState(t, id, agent.StateStopped)
	_, page := ts.get(t, path)
	if !strings.Contains(page, "The first words") || !strings.Contains(page, ">stopped</span>") {
		t.Error("the page lacks the stopped partial reply")
	}
}
