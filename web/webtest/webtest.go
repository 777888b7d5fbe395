// Package webtest serves a real Parley (web.Server on a real SQLite file) for the tests of
// the servers of other protocols (web/inbound/...), runs scripted agents in it, and acts as
// its people through the JSON API.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/inbound/a2aserver"
)

// Server is a started Parley on an httptest server.
type Server struct {
	*httptest.Server
	*Parley
	DB *store.DB
}

// Serve starts Parley on db (a fresh database when nil) with opts, serving agents; it
// shuts down when the test ends. Opts.DB and Heartbeat are set here, and Runner when it is
// not (RunnerWith makes one with policies); Auth defaults to local accounts.
func Serve(t testing.TB, db *store.DB, opts web.NewServerOptions, agents ...domain.Agent) *Server {
	t.Helper()
	return ServeA2A(t, db, opts, nil, agents...)
}

// ServeA2A is Serve with the A2A server too, when a2a is set.
func ServeA2A(t testing.TB, db *store.DB, opts web.NewServerOptions, a2a *a2aserver.Options, agents ...domain.Agent) *Server {
	t.Helper()
	if db == nil {
		db = storetest.New(t)
	}
	if opts.Runner == nil {
		opts.Runner = Runner(db, agents...)
	}
	opts.DB, opts.Heartbeat = db, time.Hour
	// The address is known before the server is made, so that notifications link to it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Notify.PublicURL == "" {
		opts.Notify.PublicURL = "http://" + l.Addr().String()
	}
	p, err := Start(context.Background(), db, opts, a2a)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(p)
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	s := &Server{Server: ts, Parley: p, DB: db}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		ts.Close()
	})
	return s
}

// Parley is what `parley serve` runs: the web server, the runner of its agents and, when
// asked, the A2A server, started and stopped in cmd/parley's order.
type Parley struct {
	Web    *web.Server
	Runner *runner.Runner
	A2A    *a2aserver.Server // nil without A2A
}

// Start starts Parley on db with opts (opts.Runner set) as cmd/parley does: Parley's A2A
// account, the web server's own work, the runner's, then the A2A server when a2a is set,
// mounted on the web server. Opts.DB and Now default to db and its clock. What it built is
// returned with an error too, to be shut down.
func Start(ctx context.Context, db *store.DB, opts web.NewServerOptions, a2a *a2aserver.Options) (*Parley, error) {
	if opts.DB == nil {
		opts.DB = db
	}
	if opts.Now == nil {
		opts.Now = db.Now
	}
	p := &Parley{Web: web.NewServer(opts), Runner: opts.Runner}
	db.OnAuthChange(p.Web.CheckStreams)
	owner, err := db.EnsureUser(ctx, domain.A2AAccount, domain.RoleService)
	if err != nil {
		return p, fmt.Errorf("a2a account: %w", err)
	}
	if owner.Role != domain.RoleService {
		return p, fmt.Errorf("the account %q belongs to a person, but Parley needs it for A2A", domain.A2AAccount)
	}
	if a2a != nil {
		a := *a2a
		a.CheckFile, a.MaxFiles, a.Logger = p.Web.Uploads().Check, p.Web.Uploads().MaxFiles, opts.Logger
		a.Watch = p.Web.Watch
		p.A2A = a2aserver.New(db, p.Runner, a)
		p.Web.MountA2A(p.A2A)
	}
	if err := p.Web.Start(ctx); err != nil {
		return p, err
	}
	if err := p.Runner.Start(ctx); err != nil {
		return p, err
	}
	if p.A2A != nil {
		return p, p.A2A.Start(ctx, owner)
	}
	return p, nil
}

// ServeHTTP serves the web server's routes (and the A2A server's, when mounted).
func (p *Parley) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.Web.ServeHTTP(w, r) }

// Serve accepts connections on l until Shutdown.
func (p *Parley) Serve(l net.Listener) error { return p.Web.Serve(l) }

// Shutdown stops Parley as cmd/parley does, within ctx: the A2A server's streams, the web
// server, then the agents' running steps.
func (p *Parley) Shutdown(ctx context.Context) error {
	if p.A2A != nil {
		p.A2A.Close()
	}
	err := p.Web.Shutdown(ctx)
	if rerr := p.Runner.Stop(ctx); rerr != nil {
		return fmt.Errorf("agent steps still running: %w", rerr)
	}
	return err
}

// Runner runs agents on db, as cmd/parley wires it: for a test that starts a web.Server of
// its own (e.g. to see it fail to start, or to stop it and start another on the same file).
func Runner(db *store.DB, agents ...domain.Agent) *runner.Runner {
	return RunnerWith(db, nil, agents...)
}

// RunnerWith is Runner with the agents' policies (who may use them, their approvers).
func RunnerWith(db *store.DB, policies map[string]domain.Policy, agents ...domain.Agent) *runner.Runner {
	return runner.New(runner.Options{Ledger: db, Agents: agents, Now: db.Now, Policies: policies})
}

// Scripted is a test agent whose steps are a Go function.
type Scripted struct {
	Name   string
	OnStep func(ctx context.Context, in domain.StepInput, out domain.Output) error
}

var _ domain.Agent = (*Scripted)(nil)

// Info names the agent "Scripted <name>".
func (a *Scripted) Info() domain.Info {
	return domain.Info{Name: a.Name, Title: "Scripted " + a.Name, Description: "a test agent"}
}

// Step calls OnStep.
func (a *Scripted) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	return a.OnStep(ctx, in, out)
}

// Person makes an account with an access token (named after the person) and returns the
// token's secret.
func (s *Server) Person(t testing.TB, name string, role domain.Role) string {
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
