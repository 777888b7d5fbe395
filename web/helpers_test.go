package web_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// scripted is a test agent whose steps are a Go function.
type scripted struct {
	name string
	step func(ctx context.Context, in domain.StepInput, out domain.Output) error

	mu    sync.Mutex
	calls []domain.StepInput
}

func (a *scripted) Info() domain.Info {
	return domain.Info{Name: a.name, Title: "Scripted " + a.name, Description: "a test agent"}
}

func (a *scripted) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	a.mu.Lock()
	a.calls = append(a.calls, in)
	a.mu.Unlock()
	return a.step(ctx, in, out)
}

func (a *scripted) triggers() []domain.Trigger {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []domain.Trigger
	for _, c := range a.calls {
		out = append(out, c.Trigger)
	}
	return out
}

type testServer struct {
	*httptest.Server
	db  *store.DB
	srv *webtest.Parley
}

func newTestServer(t testing.TB, db *store.DB, agents ...domain.Agent) *testServer {
	t.Helper()
	srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runnerFor(db, agents...), Heartbeat: time.Hour})
	return newTestServerFrom(t, db, srv)
}

// startServer starts Parley on db with opts (opts.Runner set) as cmd/parley does: the web
// server, its runner and their order.
func startServer(t testing.TB, db *store.DB, opts web.NewServerOptions) *webtest.Parley {
	t.Helper()
	srv, err := webtest.Start(context.Background(), db, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// newTestServerFrom serves a started server.
func newTestServerFrom(t testing.TB, db *store.DB, srv *webtest.Parley) *testServer {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	return &testServer{Server: ts, db: db, srv: srv}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (ts *testServer) post(t testing.TB, path string, form url.Values) (int, string, http.Header) {
	t.Helper()
	resp, err := noRedirect.PostForm(ts.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (ts *testServer) get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// start creates a conversation with the agent and returns its id path, e.g. "/c/1".
func (ts *testServer) start(t testing.TB, agentName, text string) string {
	t.Helper()
	code, body, h := ts.post(t, "/conversations", url.Values{"agent": {agentName}, "text": {text}})
	if code != http.StatusSeeOther {
		t.Fatalf("POST /conversations = %d %s, want 303", code, body)
	}
	return h.Get("Location")
}

// waitState polls until the conversation reaches state.
func (ts *testServer) waitState(t testing.TB, id int64, state domain.RunState) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := ts.db.Conversation(context.Background(), id)
		if err == nil && c.State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %d state = %q, want %q", id, c.State, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sseEvent is one server-sent event as the browser parses it.
type sseEvent struct {
	ID, Event string
	Data      []string
}

func (e sseEvent) data() string { return strings.Join(e.Data, "\n") }

// readSSE reads the stream at path until done says so (or the timeout), with Last-Event-ID if given.
func (ts *testServer) readSSE(t testing.TB, path, lastEventID string, done func([]sseEvent) bool) []sseEvent {
	t.Helper()
	s := ts.open(t, path, lastEventID)
	if ct := s.resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream content type %q", ct)
	}
	var events []sseEvent
	for {
		events = append(events, s.next())
		if done(events) {
			return events
		}
	}
}

// sseReader reads one stream event by event, as the browser parses it.
type sseReader struct {
	t    testing.TB
	resp *http.Response
	sc   *bufio.Scanner
	last string // the last id seen
}

// open opens the stream at path, with Last-Event-ID if given; it ends with the test or
// after 10 s.
func (ts *testServer) open(t testing.TB, path, lastEventID string) *sseReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+path, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close(); cancel() })
	return newSSEReader(t, resp)
}

// newSSEReader reads the events of a stream's response.
func newSSEReader(t testing.TB, resp *http.Response) *sseReader {
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &sseReader{t: t, resp: resp, sc: sc}
}

// next reads the next event. A field is "name:value", or "name: value" (one space is dropped).
func (r *sseReader) next() sseEvent {
	r.t.Helper()
	var cur sseEvent
	for r.sc.Scan() {
		line := r.sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if cur.Event != "" {
				if cur.ID != "" {
					r.last = cur.ID
				}
				return cur
			}
		case field == "id":
			cur.ID = value
		case field == "event":
			cur.Event = value
		case field == "data":
			cur.Data = append(cur.Data, value)
		}
	}
	r.t.Fatalf("the stream ended: %v", r.sc.Err())
	return cur
}

func containing(s string) func([]sseEvent) bool {
	return func(evs []sseEvent) bool {
		return strings.Contains(evs[len(evs)-1].data(), s)
	}
}

func newDB(t testing.TB) *store.DB { return storetest.New(t) }

// runnerFor runs agents on db, as cmd/parley wires it.
func runnerFor(db *store.DB, agents ...domain.Agent) *runner.Runner {
	return runner.New(runner.Options{Ledger: db, Agents: agents, Now: db.Now})
}

// singlePerson is the sign-in of tests about something else: one person, no sign-in
// (AuthNone), who owns every conversation and is staff.
var singlePerson = web.AuthOptions{Mode: web.AuthNone}
