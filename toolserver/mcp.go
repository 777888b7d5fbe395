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
package toolserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/child"
)

// DefaultTimeout bounds one call of a tool (one round of it: the wait for a person is not counted).
const DefaultTimeout = 2 * time.Minute

// DefaultMaxSessions is how many sessions of one server a pool holds at most when the
// server speaks a revision before 2026-07-28 (see ServerConfig.MaxSessions).
const DefaultMaxSessions = 16

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
	// InheritEnv gives a local server all of Parley's environment; without it, it gets only
	// what a program needs to run (PATH, HOME, the locale, ...) and Env.
	InheritEnv bool
	// MaxSessions bounds the sessions held with a server of a revision before 2026-07-28,
	// whose questions in the middle of a call do not say which call they belong to: each
	// call in flight gets a session of its own (for a local server, a process of its own),
	// started on demand and reused; a call beyond them waits for a free one. 0 is
	// DefaultMaxSessions. A server of a later revision serves every call on one session.
	MaxSessions int
}

// Check reports what is wrong with the server's settings, naming the setting.
func (c ServerConfig) Check() error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return errors.New("name is required")
	case !validName(c.Name) || strings.Contains(c.Name, toolSeparator):
		return fmt.Errorf("name %q: use letters, digits, - and single _ only (__ separates a server's name from its tools')", c.Name)
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
	case c.MaxSessions < 0 || c.MaxSessions > maxMaxSessions:
		return fmt.Errorf("max_sessions must be between 1 and %d", maxMaxSessions)
	}
	if c.URL != "" {
		if _, ok := domain.WebURL(c.URL); !ok {
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

// place says where the server is, for the log and the home page: the command, or the URL's
// scheme and host (a path or query may hold a key).
func (c ServerConfig) place() string {
	if c.Command != "" {
		return c.Command
	}
	if u, err := url.Parse(c.URL); err == nil {
		return u.Scheme + "://" + u.Host
	}
	return "(a URL that does not parse)"
}

// scrub takes the server's URL out of an error's text, leaving its place.
func (c ServerConfig) scrub(err error) error {
	if err == nil || c.URL == "" || !strings.Contains(err.Error(), c.URL) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), c.URL, c.place()))
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
	// closed is set by Close: no session starts after it.
	closeMu sync.Mutex
	closed  bool
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
	// IdleSession is how long a session started for a call is kept once no call uses it;
	// 0 is DefaultIdleSession.
	IdleSession time.Duration
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
		if c.MaxSessions == 0 {
			c.MaxSessions = DefaultMaxSessions
		}
		s := &server{pool: p, cfg: c, httpClient: opts.HTTPClient, retry: opts.Retry, log: p.log.With("mcp_server", c.Name),
			ready: make(chan struct{}), freed: make(chan struct{}), idleAfter: opts.IdleSession}
		if s.idleAfter <= 0 {
			s.idleAfter = DefaultIdleSession
		}
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

// closeWait bounds Close: a server that is not gone by then is killed.
const closeWait = 4 * time.Second

// Close stops every server, within closeWait: calls in flight end (a question a server
// asks in the middle of one with them, see Call.Live), then a local server gets its stdin
// closed, then SIGTERM, then SIGKILL.
func (p *Pool) Close() {
	p.closeMu.Lock()
	p.closed = true
	p.closeMu.Unlock()
	p.cancel()
	if child.Wait(&p.wg, closeWait) {
		return
	}
	p.log.Warn("tool servers still closing; killing them", "after", closeWait.String())
	for _, s := range p.servers {
		for _, st := range s.all() {
			child.KillGroup(st.cmd)
		}
	}
}

// Problems says which servers are not available and why, naming the agent and the server.
func (p *Pool) Problems() []string {
	var out []string
	for _, s := range p.servers {
		if _, err := s.current(); err != nil {
			out = append(out, fmt.Sprintf("agent %q: tool server %q (%s): %v", p.agent, s.cfg.Name, s.cfg.place(), err))
		}
		s.mu.Lock()
		if s.strayAsked {
			out = append(out, fmt.Sprintf("agent %q: tool server %q (%s) asked a person something Parley could not tie to one of its calls "+
				"(outside any call, or beside other calls on one session), so Parley could not tell whose it was, and cancelled it", p.agent, s.cfg.Name, s.cfg.place()))
		}
		s.mu.Unlock()
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
		ts, err := s.toolList()
		if err != nil {
			missing = append(missing, Missing{Server: s.cfg.Name, Tools: s.lastToolNames(), Err: err})
			continue
		}
		tools = append(tools, ts...)
	}
	return tools, missing
}

// Tool finds a tool by the name the model calls it.
func (p *Pool) Tool(name string) (Tool, bool) {
	for _, s := range p.servers {
		if !strings.HasPrefix(name, s.cfg.Name) {
			continue
		}
		ts, err := s.toolList()
		if err != nil {
			continue
		}
		for _, t := range ts {
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
