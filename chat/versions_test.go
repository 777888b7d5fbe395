package chat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/parley-chat/parley/api"
)

// fakeAPI is a Parley API for one conversation (7): it answers each "METHOD /path" with
// what the test set, and keeps the requests it was sent.
type fakeAPI struct {
	mu       sync.Mutex
	answers  map[string]fakeAnswer
	requests []fakeRequest
}

type fakeAnswer struct {
	status int
	body   string
}

type fakeRequest struct {
	route string
	body  map[string]string
}

func newFakeAPI(t *testing.T) (*fakeAPI, *chatClient) {
	t.Helper()
	f := &fakeAPI{answers: map[string]fakeAnswer{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer parley_secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		route := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/api/v1")
		var body map[string]string
		if r.Method == http.MethodPost || r.Method == http.MethodPut {
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q, want JSON", route, ct)
			}
			b, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(b, &body); err != nil {
				t.Errorf("%s: body %q is not a JSON object of strings: %v", route, b, err)
			}
		}
		f.mu.Lock()
		f.requests = append(f.requests, fakeRequest{route, body})
		a, ok := f.answers[route]
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if a.status >= 400 && strings.Contains(a.body, `"title"`) {
			w.Header().Set("Content-Type", "application/problem+json")
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return f, &chatClient{base: srv.URL, token: "parley_secret", http: srv.Client()}
}

func (f *fakeAPI) answer(route string, status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[route] = fakeAnswer{status, body}
}

// sent returns the POSTs and PUTs sent since the last call.
func (f *fakeAPI) sent() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var posts []fakeRequest
	for _, r := range f.requests {
		if strings.HasPrefix(r.route, "POST ") || strings.HasPrefix(r.route, "PUT ") {
			posts = append(posts, r)
		}
	}
	f.requests = nil
	return posts
}

// versionSession is ann's session on conversation 7, which shows her two messages and the
// agent's answers (events 1 to 4), and bob's question (5).
func versionSession(t *testing.T) (*session, *fakeAPI, *strings.Builder) {
	t.Helper()
	fake, c := newFakeAPI(t)
	var out strings.Builder
	s := &session{c: c, ctx: context.Background(), out: &out, errw: &out, me: "ann",
		sent: map[string]bool{}, ours: map[int64]bool{}}
	s.showPage(apiConversationPage{Conversation: apiConversation{ID: 7, Agent: "fake", State: "done"}, Messages: []apiMessage{
		{EventID: 1, Role: "user", Author: "ann", Text: "Plan a party"},
		{EventID: 2, Role: "agent", MessageID: "m2", Author: "fake", Text: "For how many?"},
		{EventID: 3, Role: "user", Author: "ann", Text: "30 people\nin May"},
		{EventID: 4, Role: "agent", MessageID: "m4", Author: "fake", Text: "Done: a party for 30."},
		{EventID: 5, Role: "user", Author: "bob", Text: "And me?"},
	}})
	out.Reset()
	return s, fake, &out
}

// event hands the session an event of the stream.
func event(t *testing.T, s *session, typ string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.handle(sseEvent{Type: typ, Data: data}); err != nil {
		t.Fatal(err)
	}
}

// streamReply streams the agent's message m in two pieces, then finishes it.
func streamReply(t *testing.T, s *session, m apiMessage) {
	t.Helper()
	half := len(m.Text) / 2
	event(t, s, api.MessageDelta, api.Delta{MessageID: m.MessageID, Author: m.Author, Text: m.Text[:half]})
	event(t, s, api.MessageDelta, api.Delta{MessageID: m.MessageID, Author: m.Author, Offset: half, Text: m.Text[half:]})
	event(t, s, api.MessageDone, m)
}

const twoVersions = `{"current": 1, "versions": [{"version": 0}, {"version": 1, "parent": 0, "fork_event_id": 5, "reason": "regenerate", "by": "ann"}]}`

func TestChat_RegenerateFollowsTheNewReply(t *testing.T) {
	s, fake, out := versionSession(t)
	fake.answer("POST /conversations/7/regenerate", http.StatusAccepted, `{"conversation": {"id": 7, "version": 1, "versions": 2}}`)
	s.command("/regenerate")
	posts := fake.sent()
	if len(posts) != 1 || posts[0].route != "POST /conversations/7/regenerate" || posts[0].body["nonce"] == "" {
		t.Fatalf("requests %+v, want one POST of regenerate with a nonce", posts)
	}
	if !s.busy() {
		t.Fatal("after /regenerate the session does not wait for the reply")
	}

	// The new version shows the messages up to ann's last; the new reply streams.
	fake.answer("GET /conversations/7/versions", http.StatusOK, twoVersions)
	fake.answer("GET /conversations/7", http.StatusOK, `{"conversation": {"id": 7, "agent": "fake", "state": "running"}, "messages": [
		{"event_id": 1, "role": "user", "author": "ann", "text": "Plan a party"},
		{"event_id": 2, "role": "agent", "message_id": "m2", "author": "fake", "text": "For how many?"},
		{"event_id": 3, "role": "user", "author": "ann", "text": "30 people\nin May"}]}`)
	event(t, s, api.VersionShown, map[string]any{"event_id": 9, "version": 1})
	event(t, s, api.RunState, api.RunStateEvent{RunID: 3, State: "running"})
	streamReply(t, s, apiMessage{EventID: 10, MessageID: "m10", Role: "agent", Author: "fake", Text: "Here is another plan."})
	if got, want := out.String(), "— version 2 of 2 —\nfake> Here is another plan.\n"; got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if s.expect {
		t.Error("the new run started, yet the session still expects it")
	}
}

func TestChat_RegenerateRefused(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"TheAPIsError", `{"error": {"code": "conflict", "message": "There is nothing to regenerate."}}`, "error: There is nothing to regenerate.\n"},
		{"AProblem", `{"type": "about:blank", "title": "Conflict", "status": 409, "detail": "The agent is still working."}`, "error: The agent is still working.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fake, out := versionSession(t)
			fake.answer("POST /conversations/7/regenerate", http.StatusConflict, tc.body)
			s.command("/regenerate")
			if out.String() != tc.want || s.busy() {
				t.Errorf("output %q (busy %v), want %q and the prompt back", out.String(), s.busy(), tc.want)
			}
		})
	}
}

func TestChat_Edit(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		status     int
		wantRoute  string // "" for no request
		wantText   string
		wantOut    string
	}{
		{"TheLastMessage", "/edit 40 people", http.StatusAccepted, "POST /conversations/7/messages/3/edit", "40 people", ""},
		{"AnEarlierOne", "/edit  #1   Plan a picnic", http.StatusAccepted, "POST /conversations/7/messages/1/edit", "Plan a picnic", ""},
		{"ATextStartingWithANumber", "/edit 2 dozen people", http.StatusAccepted, "POST /conversations/7/messages/3/edit", "2 dozen people", ""},
		{"AloneListsThem", "/edit", 0, "", "", "Your messages:\n  #1  Plan a party\n  #2  30 people…\n" +
			"/edit NEW TEXT replaces the last one, /edit #N NEW TEXT the Nth; the agent answers it again.\n"},
		{"NoSuchMessage", "/edit #3 x", 0, "", "", "error: no message #3: you have 2 here\n"},
		{"SpacesListThem", "/edit   ", 0, "", "", "Your messages:"},
		{"TheServerRefuses", "/edit 40", http.StatusUnprocessableEntity, "POST /conversations/7/messages/3/edit", "40", "error: The message is empty.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fake, out := versionSession(t)
			fake.answer("GET /conversations/7", http.StatusOK, `{"conversation": {"id": 7}, "messages": [
				{"event_id": 1, "role": "user", "author": "ann", "text": "Plan a party"},
				{"event_id": 2, "role": "agent", "author": "fake", "text": "For how many?"},
				{"event_id": 3, "role": "user", "author": "ann", "text": "30 people\nin May"},
				{"event_id": 5, "role": "user", "author": "bob", "text": "And me?"}]}`)
			body := `{"conversation": {"id": 7, "version": 1}}`
			if tc.status >= 400 {
				body = `{"error": {"code": "invalid", "message": "The message is empty."}}`
			}
			fake.answer("POST /conversations/7/messages/3/edit", tc.status, body)
			fake.answer("POST /conversations/7/messages/1/edit", tc.status, body)
			s.command(tc.line)
			posts := fake.sent()
			switch {
			case tc.wantRoute == "" && len(posts) > 0:
				t.Errorf("requests %+v, want none", posts)
			case tc.wantRoute != "" && (len(posts) != 1 || posts[0].route != tc.wantRoute || posts[0].body["text"] != tc.wantText || posts[0].body["nonce"] == ""):
				t.Errorf("requests %+v, want %s with text %q and a nonce", posts, tc.wantRoute, tc.wantText)
			}
			if !strings.HasPrefix(out.String(), tc.wantOut) || (tc.wantOut == "" && out.Len() > 0) {
				t.Errorf("output %q, want %q", out.String(), tc.wantOut)
			}
			if got, want := s.busy(), tc.status == http.StatusAccepted; got != want {
				t.Errorf("busy = %v, want %v", got, want)
			}
		})
	}
}

func TestChat_EditShowsTheNewMessageOnceThenTheReply(t *testing.T) {
	s, fake, out := versionSession(t)
	fake.answer("GET /conversations/7/versions", http.StatusOK, twoVersions)
	// The new version forks before ann's second message, edited.
	fake.answer("GET /conversations/7", http.StatusOK, `{"conversation": {"id": 7, "state": "running"}, "messages": [
		{"event_id": 1, "role": "user", "author": "ann", "text": "Plan a party"},
		{"event_id": 2, "role": "agent", "message_id": "m2", "author": "fake", "text": "For how many?"},
		{"event_id": 9, "role": "user", "author": "ann", "text": "40 people"}]}`)
	event(t, s, api.VersionShown, map[string]any{"event_id": 8, "version": 1})
	event(t, s, api.MessageDone, apiMessage{EventID: 9, Role: "user", Author: "ann", Nonce: "n1", Text: "40 people"})
	streamReply(t, s, apiMessage{EventID: 10, MessageID: "m10", Role: "agent", Author: "fake", Text: "A party for 40."})
	if got, want := out.String(), "— version 2 of 2 —\nyou> 40 people\nfake> A party for 40.\n"; got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestChat_AnotherVersionChosenElsewhereIsShown(t *testing.T) {
	s, fake, out := versionSession(t)
	fake.answer("GET /conversations/7/versions", http.StatusOK, `{"current": 2, "versions": [{"version": 0}, {"version": 1}, {"version": 2}]}`)
	fake.answer("GET /conversations/7", http.StatusOK, `{"conversation": {"id": 7, "state": "done"}, "messages": [
		{"event_id": 1, "role": "user", "author": "ann", "text": "Plan a party"},
		{"event_id": 2, "role": "agent", "message_id": "m2", "author": "fake", "text": "For how many?"},
		{"event_id": 12, "role": "user", "author": "ann", "text": "12 people"},
		{"event_id": 13, "role": "agent", "message_id": "m13", "author": "fake", "text": "A dinner for 12."}],
		"questions": [{"id": 4, "state": "pending", "message": "Which day?"}, {"id": 3, "state": "answered"}]}`)
	event(t, s, api.VersionShown, map[string]any{"event_id": 20, "version": 2})
	// The stream may still carry what the conversation already showed: it is not shown twice.
	streamReply(t, s, apiMessage{EventID: 13, MessageID: "m13", Role: "agent", Author: "fake", Text: "A dinner for 12."})
	if got, want := out.String(), "— version 3 of 3 —\nyou> 12 people\nfake> A dinner for 12.\n"; got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if len(s.pending) != 1 || s.pending[0].ID != 4 || s.state != "done" {
		t.Errorf("pending %+v, state %q: want question 4 pending, the run done", s.pending, s.state)
	}
	if len(s.transcript) != 4 || s.transcript[3].EventID != 13 {
		t.Errorf("transcript %+v, want the 4 messages of version 3", s.transcript)
	}
}

func TestChat_QueuedMessages(t *testing.T) {
	s, _, out := versionSession(t)
	event(t, s, api.MessageQueued, map[string]any{"event_id": 6, "queued": map[string]any{"id": 6, "text": "Also a cake", "author": "ann"}})
	event(t, s, api.MessageQueued, map[string]any{"event_id": 7, "queued": map[string]any{"id": 7, "text": "And music", "author": "bob"}})
	event(t, s, api.MessageUnqueued, map[string]any{"event_id": 8, "id": 7, "sent": false})
	event(t, s, api.MessageUnqueued, map[string]any{"event_id": 9, "id": 6, "sent": true})
	want := "(queued: will be sent when the agent finishes)\n(bob's message is queued: it will be sent when the agent finishes)\n(a queued message was withdrawn)\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestChat_ShowPageSaysWhatIsQueued(t *testing.T) {
	s, _, out := versionSession(t)
	s.showPage(apiConversationPage{Conversation: apiConversation{ID: 7, Agent: "fake", State: "running"},
		Queued: []api.Queued{{ID: 6, Author: "ann", Text: "Also a cake\nand candles"}}})
	if want := "(queued: \"Also a cake…\", will be sent when the agent finishes)\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("output:\n%s\nwant it to end with %q", out.String(), want)
	}
}

func TestChat_HelpListsTheCommands(t *testing.T) {
	s, _, out := versionSession(t)
	s.command("/help")
	for _, cmd := range []string{"/retry", "/regenerate", "/edit", "/good", "/bad", "/stop", "/quit"} {
		if !strings.Contains(out.String(), cmd) || !strings.Contains(chatUsage, cmd) {
			t.Errorf("/help or chat -h does not list %s:\n%s", cmd, out.String())
		}
	}
}

// /good and /bad rate the last reply shown (event 4, not the person's messages after it),
// /bad with what was wrong; a refusal is said.
func TestChat_RateTheLastReply(t *testing.T) {
	s, fake, out := versionSession(t)
	fake.answer("PUT /conversations/7/replies/4/feedback", 200, `{"rating": "bad"}`)
	s.command("/bad It forgot the cake.")
	got := fake.sent()
	if len(got) != 1 || got[0].route != "PUT /conversations/7/replies/4/feedback" || got[0].body["rating"] != "bad" || got[0].body["comment"] != "It forgot the cake." {
		t.Fatalf("/bad sent %+v", got)
	}
	if !strings.Contains(out.String(), "rated bad") {
		t.Errorf("output %q; want it to say the reply is rated", out.String())
	}
	s.command("/good")
	if got := fake.sent(); len(got) != 1 || got[0].body["rating"] != "good" || got[0].body["comment"] != "" {
		t.Errorf("/good sent %+v", got)
	}
	fake.answer("PUT /conversations/7/replies/4/feedback", 404, `{"title": "Reply 4 not found.", "status": 404}`)
	out.Reset()
	s.command("/good")
	if !strings.Contains(out.String(), "not found") {
		t.Errorf("a refusal: output %q", out.String())
	}
}
