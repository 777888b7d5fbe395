// Package mcp connects model-backed agents to MCP tool servers with the official Go SDK:
// local servers started as a command (stdio) and remote ones over Streamable HTTP. A Pool
// holds one agent's servers: it starts them with the process, lists their tools for the
// model under names that cannot collide, calls them, and says which are missing and why.
//
// A server that asks the person something in the middle of a call does it the way of MCP
// 2026-07-28 (SEP-2322, "multi round-trip"): the call returns its input requests and an
// opaque state, and is sent again, state and answers with it, once the person answered.
// Nothing waits in between, so a question survives a restart of Parley and of the server.
// Form requests map onto Parley's question model (see Question); URL requests become a link
// the person opens.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultTimeout bounds one call of a tool (one round of it: the wait for a person is not counted).
const DefaultTimeout = 2 * time.Minute

// ServerConfig is one tool server of an agent, as the operator declares it: Command for a
// local server (stdio), URL for a remote one (Streamable HTTP).
type ServerConfig struct {
	Name string
	// Command is run with Args, its environment plus Env, in Dir.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL is the server's MCP endpoint; Headers go with every request, and Bearer (read by
	// the caller from an environment variable) as "Authorization: Bearer ...".
	URL     string
	Headers map[string]string
	Bearer  string
	// Timeout bounds one call; 0 is DefaultTimeout.
	Timeout time.Duration
	// Approve asks the person before any tool of the server runs; ApproveTools before those
	// tools only. ReadOnly names tools that never ask first (they change nothing).
	Approve      bool
	ApproveTools []string
	ReadOnly     []string
	// AllowEmail lets the server ask for an email address (a string of format email).
	AllowEmail bool
}

// Check reports what is wrong with the server's settings, naming the setting.
func (c ServerConfig) Check() error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return errors.New("name is required")
	case !validName(c.Name):
		return fmt.Errorf("name %q: use letters, digits, - and _ only", c.Name)
	case c.Command == "" && c.URL == "":
		return errors.New("command (a local server) or url (a remote one) is required")
	case c.Command != "" && c.URL != "":
		return errors.New("command and url: give one, not both")
	case c.Command == "" && (len(c.Args) > 0 || len(c.Env) > 0 || c.Dir != ""):
		return errors.New("args, env and dir are for a command; this server has a url")
	case c.URL == "" && (len(c.Headers) > 0 || c.Bearer != ""):
		return errors.New("headers and bearer_token_env are for a url; this server has a command")
	case c.Timeout < 0:
		return errors.New("timeout must not be negative")
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q must be an http:// or https:// URL", c.URL)
		}
	}
	for _, t := range c.ReadOnly {
		if slices.Contains(c.ApproveTools, t) {
			return fmt.Errorf("tool %q is both in approve_tools and in read_only", t)
		}
	}
	return nil
}

// place says where the server is, for the log and the home page: the command or the URL
// (without credentials).
func (c ServerConfig) place() string {
	if c.Command != "" {
		return c.Command
	}
	if u, err := url.Parse(c.URL); err == nil {
		return u.Redacted()
	}
	return c.URL
}

func validName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

// Pool is one agent's tool servers.
type Pool struct {
	agent   string
	log     *slog.Logger
	servers []*server
	// onComplete is told when a server says that an interaction the person had at a URL is
	// complete, with the question that waits for it.
	onComplete func(server string, questionID int64)
	awaitMu    sync.Mutex
	awaiting   map[string]int64 // server + " " + elicitation id: the question

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Options configures NewPool.
type Options struct {
	// Agent names the agent whose servers these are, in the log and in problems.
	Agent   string
	Servers []ServerConfig
	Logger  *slog.Logger
	// HTTPClient carries the requests to remote servers; nil is a client without timeout.
	HTTPClient *http.Client
	// Retry is the first wait before a server that failed or died is started again,
	// doubling up to a minute; 0 is one second.
	Retry time.Duration
}

// NewPool checks the servers' settings; Start connects them.
func NewPool(opts Options) (*Pool, error) {
	p := &Pool{agent: opts.Agent, log: opts.Logger}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.log = p.log.With("agent", opts.Agent)
	seen := map[string]bool{}
	for i, c := range opts.Servers {
		if err := c.Check(); err != nil {
			name := c.Name
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			return nil, fmt.Errorf("mcp server %q: %w", name, err)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("mcp server %q: another server of the agent has this name", c.Name)
		}
		seen[c.Name] = true
		if c.Timeout == 0 {
			c.Timeout = DefaultTimeout
		}
		s := &server{pool: p, cfg: c, httpClient: opts.HTTPClient, retry: opts.Retry, log: p.log.With("mcp_server", c.Name),
			ready: make(chan struct{})}
		if s.retry <= 0 {
			s.retry = time.Second
		}
		p.servers = append(p.servers, s)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// OnComplete sets who is told that a URL interaction is complete (the server's
// notifications/elicitation/complete), with the question asked for it (see Awaiting); set
// it before Start.
func (p *Pool) OnComplete(f func(server string, questionID int64)) { p.onComplete = f }

// Awaiting notes that the question asks the person to go to the server's URL of the
// elicitation: when the server says it is complete, OnComplete is told. Kept in memory:
// after a restart the person says it themselves.
func (p *Pool) Awaiting(server, elicitationID string, questionID int64) {
	if elicitationID == "" {
		return
	}
	p.awaitMu.Lock()
	defer p.awaitMu.Unlock()
	if p.awaiting == nil {
		p.awaiting = map[string]int64{}
	}
	p.awaiting[server+" "+elicitationID] = questionID
}

// SetLogger sets the log of the pool's servers; call it before Start.
func (p *Pool) SetLogger(l *slog.Logger) {
	p.log = l.With("agent", p.agent)
	for _, s := range p.servers {
		s.log = p.log.With("mcp_server", s.cfg.Name)
	}
}

// Start connects every server in the background, and again whenever one fails or dies.
func (p *Pool) Start() {
	for _, s := range p.servers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			s.run(p.ctx)
		}()
	}
}

// WaitReady waits until every server has been tried once (connected or failed), or ctx ends.
func (p *Pool) WaitReady(ctx context.Context) error {
	for _, s := range p.servers {
		select {
		case <-s.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close stops every server: a local one gets its stdin closed, then SIGTERM, then SIGKILL.
func (p *Pool) Close() {
	p.cancel()
	p.wg.Wait()
}

// Problems says which servers are not available and why, naming the agent and the server.
func (p *Pool) Problems() []string {
	var out []string
	for _, s := range p.servers {
		if _, err := s.current(); err != nil {
			out = append(out, fmt.Sprintf("agent %q: tool server %q (%s): %v", p.agent, s.cfg.Name, s.cfg.place(), err))
		}
	}
	return out
}

// Missing is a server whose tools cannot be offered now, and why.
type Missing struct {
	Server string
	// Tools are the tools it had when it was last seen, if ever.
	Tools []string
	Err   error
}

// Tools returns the tools offered to the model, in the servers' order, and the servers that
// are missing.
func (p *Pool) Tools() ([]Tool, []Missing) {
	var tools []Tool
	var missing []Missing
	for _, s := range p.servers {
		st, err := s.current()
		if err != nil {
			missing = append(missing, Missing{Server: s.cfg.Name, Tools: s.lastToolNames(), Err: err})
			continue
		}
		tools = append(tools, st.tools...)
	}
	return tools, missing
}

// Tool finds a tool by the name the model calls it.
func (p *Pool) Tool(name string) (Tool, bool) {
	for _, s := range p.servers {
		if !strings.HasPrefix(name, s.cfg.Name) {
			continue
		}
		st, err := s.current()
		if err != nil {
			continue
		}
		for _, t := range st.tools {
			if t.Name == name {
				return t, true
			}
		}
	}
	return Tool{}, false
}

// ServerOf returns the name of the server a model's tool name belongs to, whether the server
// is up or not, and the tool's own name; ok is false for a name of no server of the pool.
func (p *Pool) ServerOf(name string) (server, tool string, ok bool) {
	for _, s := range p.servers {
		if rest, found := strings.CutPrefix(name, s.cfg.Name+toolSeparator); found && rest != "" {
			return s.cfg.Name, rest, true
		}
	}
	return "", "", false
}

// server is one tool server and its session.
type server struct {
	pool       *Pool
	cfg        ServerConfig
	httpClient *http.Client
	retry      time.Duration
	log        *slog.Logger
	ready      chan struct{} // closed once the first attempt is over
	readyOnce  sync.Once

	mu    sync.Mutex
	state *session
	err   error
	names []string // the tools it had when last connected
}

// session is a connected server: its session and tools.
type session struct {
	cs    *sdk.ClientSession
	tools []Tool
	// broken is closed when a call finds the connection gone.
	broken     chan struct{}
	breakOnce  sync.Once
	brokenWhy  error
	protocol   string
	serverName string
}

func (st *session) markBroken(err error) {
	st.breakOnce.Do(func() {
		st.brokenWhy = err
		close(st.broken)
	})
}

// current returns the connected session, or why there is none.
func (s *server) current() (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		if s.err == nil {
			return nil, errors.New("not started yet")
		}
		return nil, s.err
	}
	return s.state, nil
}

func (s *server) lastToolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.names)
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
		s.mu.Lock()
		s.state, s.err = nil, err
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
	s.mu.Lock()
	s.state, s.err = st, nil
	s.names = s.names[:0]
	for _, t := range st.tools {
		s.names = append(s.names, t.Tool)
	}
	s.mu.Unlock()
	s.log.Info("tool server ready", "server", s.cfg.place(), "tools", len(st.tools), "protocol", st.protocol, "implementation", st.serverName)
	s.readyOnce.Do(func() { close(s.ready) })
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

// connectTimeout bounds starting and initializing a server and listing its tools.
const connectTimeout = 30 * time.Second

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
	})
	var t sdk.Transport
	if s.cfg.Command != "" {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Dir
		cmd.Env = os.Environ()
		for k, v := range s.cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = &logWriter{log: s.log}
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
			hc = &http.Client{Transport: headerTransport{base: base, headers: s.cfg.Headers, bearer: s.cfg.Bearer}, Jar: hc.Jar}
		}
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: -1}
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("could not start and initialize it: %w", err)
	}
	st.cs = cs
	if res := cs.InitializeResult(); res != nil {
		st.protocol = res.ProtocolVersion
		if res.ServerInfo != nil {
			st.serverName = res.ServerInfo.Name
		}
	}
	for tool, err := range cs.Tools(cctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("could not list its tools: %w", err)
		}
		st.tools = append(st.tools, s.tool(tool))
	}
	return st, nil
}

// headerTransport adds the server's headers and bearer token to each request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	bearer  string
}

// RoundTrip implements http.RoundTripper.
func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	if h.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+h.bearer)
	}
	return h.base.RoundTrip(r)
}

// logWriter logs what a local server writes to stderr, line by line.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := slices.Index(w.buf, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.log.Info("tool server says", "line", line)
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.log.Info("tool server says", "line", string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(b), nil
}
