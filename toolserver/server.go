package toolserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parley-chat/parley/internal/child"
)

// server is one tool server and its sessions.
type server struct {
	pool       *Pool
	cfg        ServerConfig
	httpClient *http.Client
	retry      time.Duration
	idleAfter  time.Duration
	log        *slog.Logger
	ready      chan struct{} // closed once the first attempt is over
	readyOnce  sync.Once

	mu sync.Mutex
	// state is the session run keeps up: its tools are the server's, and it serves calls.
	state *session
	err   error
	tools []Tool
	names []string // the tools it had when last connected
	// extra are the sessions started for calls beyond state, when each call needs one of
	// its own (see perCall); starting counts those being started.
	extra    []*session
	starting int
	// freed is closed, and made anew, whenever a session becomes free or goes.
	freed chan struct{}
	// askedLive: the server asked in the middle of a call although its revision would not,
	// so its calls get sessions of their own from then on.
	askedLive bool
	// strayAsked: the server asked something Parley could not tie to one of its calls.
	strayAsked bool
}

// session is a connected server: one MCP session, and for a local server its process.
type session struct {
	cs *sdk.ClientSession
	// broken is closed when a call finds the connection gone, or the session is let go.
	broken     chan struct{}
	breakOnce  sync.Once
	brokenWhy  error
	protocol   string
	serverName string
	// cmd is a local server's process.
	cmd *exec.Cmd

	// busy marks a session a call holds for itself; idle lets an unused extra session go.
	// Both are guarded by the server's mu.
	busy bool
	idle *time.Timer

	// live are the calls in flight that can ask the person mid-call, by a number of their own.
	liveMu   sync.Mutex
	live     map[int]func(context.Context, Input) (Response, error)
	liveNext int
}

// track notes a call in flight that asks the person through ask; done forgets it.
func (st *session) track(ask func(context.Context, Input) (Response, error)) (done func()) {
	st.liveMu.Lock()
	defer st.liveMu.Unlock()
	if st.live == nil {
		st.live = map[int]func(context.Context, Input) (Response, error){}
	}
	st.liveNext++
	n := st.liveNext
	st.live[n] = ask
	return func() {
		st.liveMu.Lock()
		delete(st.live, n)
		st.liveMu.Unlock()
	}
}

// only returns the one call in flight on the session, if there is exactly one: a request
// of the server in the middle of a call carries nothing that says which call it belongs
// to, so the session it comes on must tell.
func (st *session) only() func(context.Context, Input) (Response, error) {
	st.liveMu.Lock()
	defer st.liveMu.Unlock()
	if len(st.live) != 1 {
		return nil
	}
	for _, f := range st.live {
		return f
	}
	return nil
}

func (st *session) markBroken(err error) {
	st.breakOnce.Do(func() {
		st.brokenWhy = err
		close(st.broken)
	})
}

func (st *session) isBroken() bool {
	select {
	case <-st.broken:
		return true
	default:
		return false
	}
}

// current returns the session run keeps up, or why there is none.
func (s *server) current() (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.currentLocked()
}

func (s *server) currentLocked() (*session, error) {
	if s.state == nil {
		if s.err == nil {
			return nil, errors.New("not started yet")
		}
		return nil, s.err
	}
	return s.state, nil
}

// toolList returns the server's tools, or why it has none now.
func (s *server) toolList() ([]Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.currentLocked(); err != nil {
		return nil, err
	}
	return s.tools, nil
}

func (s *server) lastToolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.names)
}

// all returns every session of the server.
func (s *server) all() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.extra)
	if s.state != nil {
		out = append(out, s.state)
	}
	return out
}

// sessionOf finds the session of an SDK session.
func (s *server) sessionOf(cs *sdk.ClientSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != nil && s.state.cs == cs {
		return s.state
	}
	for _, st := range s.extra {
		if st.cs == cs {
			return st
		}
	}
	return nil
}

// run connects the server, waits until its session ends, and connects it again after a
// wait that doubles while it keeps failing, until ctx ends.
func (s *server) run(ctx context.Context) {
	wait := s.retry
	for {
		start := time.Now()
		err := s.serve(ctx)
		s.readyOnce.Do(func() { close(s.ready) })
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errRetired) {
			// Retired after a call cut off: start it again at once; meanwhile its tools stay
			// offered, and calls take other sessions. (If it does not start, that is an error.)
			continue
		}
		err = s.cfg.scrub(err)
		s.mu.Lock()
		s.state, s.err = nil, err
		s.signalLocked()
		s.mu.Unlock()
		s.log.Error("tool server not available", "server", s.cfg.place(), "error", err, "retry_in", wait.String())
		if time.Since(start) > time.Minute {
			wait = s.retry // it ran a good while: start again soon
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, time.Minute)
	}
}

// serve connects the server and returns when its session ends, saying why.
func (s *server) serve(ctx context.Context) error {
	st, err := s.connect(ctx)
	if err != nil {
		return err
	}
	tools, err := s.listTools(ctx, st)
	if err != nil {
		st.cs.Close()
		child.KillGroup(st.cmd)
		return err
	}
	s.mu.Lock()
	s.state, s.err = st, nil
	s.setToolsLocked(tools)
	s.signalLocked()
	s.mu.Unlock()
	s.log.Info("tool server ready", "server", s.cfg.place(), "tools", len(tools), "protocol", st.protocol, "implementation", st.serverName)
	names := s.lastToolNames()
	for _, name := range slices.Concat(s.cfg.ApproveTools, s.cfg.ReadOnly) {
		if !slices.Contains(names, name) {
			s.log.Warn("approve_tools or read_only names a tool the server does not have", "tool", name, "tools", strings.Join(names, ", "))
		}
	}
	s.readyOnce.Do(func() { close(s.ready) })
	return s.hold(ctx, st)
}

// hold waits until the session ends (the server ends it, a call finds the connection
// broken, or ctx ends), closes it with what a local server started (npx and uvx start the
// real one), and says why it ended.
func (s *server) hold(ctx context.Context, st *session) error {
	defer child.KillGroup(st.cmd)
	ended := make(chan error, 1)
	go func() { ended <- st.cs.Wait() }()
	select {
	case <-ctx.Done():
		st.cs.Close()
		<-ended
		return ctx.Err()
	case err := <-ended:
		if err == nil {
			err = errors.New("the server ended its session")
		}
		return fmt.Errorf("the server stopped: %w", err)
	case <-st.broken:
		st.cs.Close()
		<-ended
		return fmt.Errorf("the connection failed: %w", st.brokenWhy)
	}
}

// listTools lists the server's tools on the session.
func (s *server) listTools(ctx context.Context, st *session) ([]Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var tools []Tool
	for tool, err := range st.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("could not list its tools: %w", err)
		}
		tools = append(tools, s.tool(tool))
	}
	return tools, nil
}

func (s *server) setToolsLocked(tools []Tool) {
	s.tools = tools
	s.names = s.names[:0]
	for _, t := range tools {
		s.names = append(s.names, t.Tool)
	}
}

// toolsChanged lists the tools again when the server says they changed, on the session
// that said so; the model is offered the new list from its next turn.
func (s *server) toolsChanged(_ context.Context, req *sdk.ToolListChangedRequest) {
	st := s.sessionOf(req.Session)
	if st == nil {
		return
	}
	// Not on the connection's own goroutine: the listing is a request of its own.
	go func() {
		tools, err := s.listTools(s.pool.ctx, st)
		if err != nil {
			s.log.Warn("tool server said its tools changed, but they could not be listed", "error", s.cfg.scrub(err))
			return
		}
		s.mu.Lock()
		s.setToolsLocked(tools)
		s.mu.Unlock()
		s.log.Info("tool server's tools changed", "tools", len(tools))
	}()
}

// connectTimeout bounds starting and initializing a server and listing its tools.
const connectTimeout = 30 * time.Second

// connect starts a session with the server (for a local server, a process of its own).
func (s *server) connect(ctx context.Context) (*session, error) {
	st := &session{broken: make(chan struct{})}
	client := sdk.NewClient(&sdk.Implementation{Name: "parley", Title: "Parley", Version: "1"}, &sdk.ClientOptions{
		Logger: s.log,
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{
			Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}},
		// Parley answers input requests itself, once the person has: see Call.
		MultiRoundTrip:              &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler:          s.liveElicitation,
		ElicitationCompleteHandler:  s.complete,
		ProgressNotificationHandler: progressHandler,
		ToolListChangedHandler:      s.toolsChanged,
	})
	// A completion notification without params would crash the SDK's own handler (v1.8.0
	// reads its id unchecked): such a message is dropped before it gets there.
	client.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "notifications/elicitation/complete" {
				if p, ok := req.GetParams().(*sdk.ElicitationCompleteParams); !ok || p == nil {
					return nil, nil
				}
			}
			return next(ctx, method, req)
		}
	})
	var t sdk.Transport
	if s.cfg.Command != "" {
		cmd := child.Command(child.Spec{Command: s.cfg.Command, Args: s.cfg.Args, Dir: s.cfg.Dir, Env: s.cfg.Env,
			Inherit: s.cfg.InheritEnv, Stderr: &child.LogWriter{Log: s.log, Says: "tool server says"}})
		st.cmd = cmd
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	} else {
		hc := s.httpClient
		if hc == nil {
			hc = &http.Client{}
		}
		if len(s.cfg.Headers) > 0 || s.cfg.Bearer != "" {
			base := hc.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			host := ""
			if u, err := url.Parse(s.cfg.URL); err == nil {
				host = u.Host
			}
			hc = &http.Client{Transport: headerTransport{base: base, host: host, headers: s.cfg.Headers, bearer: s.cfg.Bearer}, Jar: hc.Jar}
		}
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		child.KillGroup(st.cmd)
		return nil, fmt.Errorf("could not start and initialize it: %w", err)
	}
	st.cs = cs
	if res := cs.InitializeResult(); res != nil {
		st.protocol = res.ProtocolVersion
		if res.ServerInfo != nil {
			st.serverName = res.ServerInfo.Name
		}
	}
	return st, nil
}

// headerTransport adds the server's headers and bearer token to each request to its host,
// and to no other (a redirect elsewhere goes without them).
type headerTransport struct {
	base    http.RoundTripper
	host    string
	headers map[string]string
	bearer  string
}

// RoundTrip implements http.RoundTripper.
func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != h.host {
		return h.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	if h.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+h.bearer)
	}
	return h.base.RoundTrip(r)
}
