package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// events opens a conversation's API event stream, with Last-Event-ID if given.
func (a *apiClient) events(id int64, lastEventID string) (*sseReader, context.CancelFunc) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/v1/conversations/%d/events", a.base, id), nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		a.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		a.t.Fatalf("events = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	a.t.Cleanup(func() { resp.Body.Close(); cancel() })
	return newSSEReader(a.t, resp), func() { cancel(); resp.Body.Close() }
}

// decode reads an event's JSON data.
func decode[T any](t *testing.T, ev sseEvent) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(ev.data()), &v); err != nil {
		t.Fatalf("%s: %v in %q", ev.Event, err, ev.data())
	}
	return v
}

// nextOf reads events until one of the kind, failing on any kind not in skip.
func nextOf(t *testing.T, r *sseReader, kind string, skip ...string) sseEvent {
	t.Helper()
	for {
		ev := r.next()
		if ev.Event == kind {
			return ev
		}
		if !strings.Contains(strings.Join(skip, " "), ev.Event) {
			t.Fatalf("got %s %s before %s", ev.Event, ev.data(), kind)
		}
	}
}

func TestAPI_EventsResumeAMessageByteForByte(t *testing.T) {
	gate := make(chan struct{})
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, gatedAgent([]string{"Hello ", "wide ", "world."}, gate))
	ann := as.token(t, "ann")
	var started apiConv
	ann.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "gated", Text: "hi", Nonce: "n-1"}, 201, &started)
	id := started.Conversation.ID
	r, stop := ann.events(id, "")
	// The person's message comes back with the key its sender gave it.
	if m := decode[api.Message](t, nextOf(t, r, "message.done")); m.Role != "user" || m.Text != "hi" || m.Author != "ann" || m.Nonce != "n-1" {
		t.Fatalf("first message = %+v", m)
	}
	if st := nextOf(t, r, "run.state"); !strings.Contains(st.data(), `"state":"running"`) {
		t.Fatalf("run.state = %s", st.data())
	}
	gate <- struct{}{}
	ev := nextOf(t, r, "message.delta")
	d := decode[api.Delta](t, ev)
	if d.Text != "Hello " || d.Offset != 0 || !strings.HasSuffix(ev.ID, "/"+d.MessageID+"/6") {
		t.Fatalf("first delta = %+v id %q", d, ev.ID)
	}
	// The client goes away; the agent writes on; the client comes back from its last id.
	stop()
	last := ev.ID
	gate <- struct{}{}
	r, stop = ann.events(id, last)
	defer stop()
	ev = nextOf(t, r, "message.delta")
	if d2 := decode[api.Delta](t, ev); d2.Text != "wide " || d2.Offset != 6 || d2.MessageID != d.MessageID {
		t.Fatalf("resumed delta = %+v, want exactly the missing piece", d2)
	}
	gate <- struct{}{}
	got := "Hello wide "
	for {
		ev := r.next()
		if ev.Event == "message.delta" {
			got += decode[api.Delta](t, ev).Text
			continue
		}
		if ev.Event != "message.done" {
			t.Fatalf("got %s before the message ended", ev.Event)
		}
		// The last pieces may come with the end: the finished text goes on from the streamed.
		if m := decode[api.Message](t, ev); m.Role != "agent" || m.Text != "Hello wide world." || !strings.HasPrefix(m.Text, got) {
			t.Fatalf("finished = %+v, streamed %q", m, got)
		}
		break
	}
	if st := nextOf(t, r, "run.state"); !strings.Contains(st.data(), `"state":"done"`) {
		t.Fatalf("run.state = %s", st.data())
	}
	// A client that was cut off mid-message and comes back after it ended gets it whole,
	// once, and no piece of it.
	r2, stop2 := ann.events(id, last)
	defer stop2()
	if m := decode[api.Message](t, nextOf(t, r2, "message.done")); m.Text != "Hello wide world." {
		t.Fatalf("after the end = %+v", m)
	}
}

func TestAPI_QuestionsAreEventsAndStateReplays(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.token(t, "ann")
	var started apiConv
	ann.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "asker", Text: "Plan the offsite"}, 201, &started)
	id := started.Conversation.ID
	r, stop := ann.events(id, "")
	defer stop()
	asked := decode[api.AskedEvent](t, nextOf(t, r, "question.asked", "message.done", "run.state"))
	if asked.Question.State != "pending" || len(asked.Question.Fields) != 1 || asked.Question.Fields[0].Name != "venue" {
		t.Fatalf("asked = %+v", asked)
	}
	if st := nextOf(t, r, "run.state"); !strings.Contains(st.data(), `"waiting"`) {
		t.Fatalf("run.state = %s", st.data())
	}
	// The pending list has it, with its conversation.
	var pending api.QuestionList
	ann.json("GET", "/api/v1/questions", nil, 200, &pending)
	if len(pending.Questions) != 1 || pending.Questions[0].ID != asked.Question.ID || pending.Questions[0].Conversation.ID != id {
		t.Fatalf("pending = %+v", pending)
	}
	// Invalid answers: every field's message, the browser's own, and nothing stored.
	q := fmt.Sprintf("/api/v1/questions/%d", asked.Question.ID)
	var e apiErr
	ann.json("POST", q+"/answer", map[string]any{"values": map[string]any{"venue": "  "}}, 422, &e)
	if e.Error.Code != "invalid" || e.Error.Fields["venue"] != "Venue is required." {
		t.Fatalf("empty answer = %+v", e)
	}
	e = apiErr{}
	ann.json("POST", q+"/answer", map[string]any{"values": map[string]any{"venue": "Lisbon", "venu": "x"}}, 422, &e)
	if len(e.Error.Fields) != 1 || !strings.Contains(e.Error.Fields["venu"], "no field") {
		t.Fatalf("unknown field = %+v", e)
	}
	var answered api.Question
	ann.json("POST", q+"/answer", map[string]any{"values": map[string]any{"venue": "Lisbon"}}, 200, &answered)
	if answered.State != "answered" || answered.Resolution.Values["venue"] != "Lisbon" || answered.Resolution.Via != "token laptop" {
		t.Fatalf("answered = %+v", answered)
	}
	// Once more (a second client, a retried request): 409, with the question as it stands.
	ann.json("POST", q+"/answer", map[string]any{"values": map[string]any{"venue": "Porto"}}, 409, &e)
	if e.Error.Question == nil || e.Error.Question.State != "answered" {
		t.Fatalf("second answer = %+v", e)
	}
	resolved := decode[api.ResolvedEvent](t, nextOf(t, r, "question.resolved"))
	if resolved.QuestionID != asked.Question.ID || resolved.Resolution.By != "ann" || resolved.Resolution.Outcome != domain.Answered {
		t.Fatalf("resolved = %+v", resolved)
	}
	nextOf(t, r, "run.state") // running again
	done := decode[api.Message](t, nextOf(t, r, "message.done", "message.delta"))
	if done.Text != "Noted: Lisbon (answered)." {
		t.Fatalf("reply = %+v", done)
	}
	as.waitState(t, id, domain.StateDone)
	// The conversation replays: its messages, its question with how it was resolved.
	var state api.ConversationState
	ann.json("GET", fmt.Sprintf("/api/v1/conversations/%d", id), nil, 200, &state)
	if state.Conversation.State != "done" || len(state.Messages) != 2 || state.Messages[1].Text != "Noted: Lisbon (answered)." ||
		len(state.Questions) != 1 || state.Questions[0].State != "answered" || state.LastEventID == 0 {
		t.Fatalf("state = %+v", state)
	}
	// From its last event id, the stream has nothing to replay.
	ann.json("GET", "/api/v1/questions", nil, 200, &pending)
	if len(pending.Questions) != 0 {
		t.Fatalf("still pending: %+v", pending)
	}
}
