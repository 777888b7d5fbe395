// Package webtest serves a real Parley (web.Server on a real SQLite file) for the tests of
// the servers of other protocols (web/inbound/...), runs scripted agents in it, and acts as
// its people through the JSON API.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
)

// Server is a started Parley on an httptest server.
type Server struct {
	*httptest.Server
	DB     *store.DB
	Web    *web.Server
	Runner *agent.Runner
}

// Serve starts Parley on db (a fresh database when nil) with opts, serving agents; it
// shuts down when the test ends. Opts.DB, Runner and Heartbeat are set here; Auth defaults
// to local accounts.
func Serve(t testing.TB, db *store.DB, opts web.NewServerOptions, agents ...agent.Agent) *Server {
	t.Helper()
	if db == nil {
		db = storetest.New(t)
	}
	r := Runner(db, agents...)
	opts.DB, opts.Runner, opts.Heartbeat = db, r, time.Hour
	// The address is known before the server is made, so that notifications link to it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Notify.PublicURL == "" {
		opts.Notify.PublicURL = "http://" + l.Addr().String()
	}
	srv := web.NewServer(opts)
	if err := srv.Start(context.Background()); err != nil {
		l.Close()
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	s := &Server{Server: ts, DB: db, Web: srv, Runner: r}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	return s
}

// Runner runs agents on db, as cmd/parley wires it: for a test that starts a web.Server of
// its own (e.g. to see it fail to start, or to stop it and start another on the same file).
func Runner(db *store.DB, agents ...agent.Agent) *agent.Runner {
	return agent.NewRunner(agent.RunnerOptions{Ledger: db, Agents: agents, Now: db.Now})
}

// Scripted is a test agent whose steps are a Go function.
type Scripted struct {
	Name   string
	OnStep func(ctx context.Context, in agent.StepInput, out agent.Output) error
}

var _ agent.Agent = (*Scripted)(nil)

// Info names the agent "Scripted <name>".
func (a *Scripted) Info() agent.Info {
	return agent.Info{Name: a.Name, Title: "Scripted " + a.Name, Description: "a test agent"}
}

// Step calls OnStep.
func (a *Scripted) Step(ctx context.Context, in agent.StepInput, out agent.Output) error {
	return a.OnStep(ctx, in, out)
}

// Person makes an account with an access token (named after the person) and returns the
// token's secret.
func (s *Server) Person(t testing.TB, name string, role agent.Role) string {
	t.Helper()
	ctx := context.Background()
	u, err := s.DB.CreateUser(ctx, name, "", role)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := s.DB.CreateToken(ctx, u.ID, name+"-laptop")
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// API calls the JSON API with a token and returns the status and the decoded body.
func (s *Server) API(t testing.TB, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var in io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		in = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL+"/api/v1"+path, in)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		t.Fatalf("%s %s: not JSON: %s", method, path, raw)
	}
	return resp.StatusCode, out
}

// Bearer is an http.RoundTripper that sends a bearer token.
type Bearer struct {
	Token string
	Next  http.RoundTripper
}

// RoundTrip adds the token.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	next := b.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// WaitFor polls cond until it holds, failing the test after 15 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Browser is an HTTP client signed in as the person (a session of theirs in its cookie), as
// a browser is after signing in.
func (s *Server) Browser(t testing.TB, name string) *http.Client {
	t.Helper()
	ctx := context.Background()
	u, _, err := s.DB.UserByName(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.DB.CreateSession(ctx, u.ID, store.SessionLimits{Idle: time.Hour, Max: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: cookie{name: "parley_session", value: token}}
}

type cookie struct{ name, value string }

func (c cookie) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.AddCookie(&http.Cookie{Name: c.name, Value: c.value})
	return http.DefaultTransport.RoundTrip(r)
}
