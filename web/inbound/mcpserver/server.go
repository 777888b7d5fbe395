// Package mcpserver is Parley's MCP server: any agent that speaks MCP (Claude Code, Codex,
// VS Code, a CI job, a script) asks a person through it, with the tools ask_person and
// request_approval. The questions go into the same ledger as every other: a conversation
// per person and client ("Questions from Claude Code"), the Inbox, the review desk.
//
// It serves Streamable HTTP for clients of revision 2026-07-28 (stateless: each request
// says who the client is) and of 2025-11-25 (sessions, named by initialize). Every request
// carries a personal access token, "Authorization: Bearer …": not OAuth.
package mcpserver

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
)

// Options configures New.
type Options struct {
	Runner *runner.Runner
	// Authenticate reads a request's bearer token: the person it acts as and the token's
	// name. An error (domain.EUNAUTHORIZED) when there is none, or it is unknown or revoked.
	Authenticate func(r *http.Request) (domain.User, string, error)
	// Group finds a group by name (ENOTFOUND when there is none), for "to".
	Group func(ctx context.Context, name string) (domain.Group, error)
	// GroupsOf finds the groups a person is in, for "escalate_to".
	GroupsOf func(ctx context.Context, userID int64) ([]domain.Group, error)
	// Notify tells the notifier that word of a new question may be due.
	Notify func()
	// OwnOrigin reports whether a browser's Origin header names Parley itself.
	OwnOrigin func(r *http.Request) bool
	// BaseURL is Parley's address as the request reached it ("https://parley.example"): the
	// links to question cards start with it.
	BaseURL func(r *http.Request) string
	// Progress is how often a waiting call that carries a progress token is told it still
	// waits (default 25 s: clients give up on a silent call at 30 s or later).
	Progress time.Duration
	// MaxWait bounds how long one call holds before it returns "pending" (default MaxWait).
	MaxWait time.Duration
	// AllowEmail lets questions ask for email addresses, which Parley otherwise refuses.
	AllowEmail bool
	Logger     *slog.Logger
}

// MaxWait is how long one call holds at most by default, whatever its wait asks: then it
// returns "pending", and the client calls again with the same request_id.
const MaxWait = time.Hour

// Server serves MCP at one path.
type Server struct {
	opts      Options
	mcp       *mcp.Server
	stateful  *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler
	// closing ends every waiting call (it returns "pending") when Parley stops.
	closing context.Context
	close   context.CancelFunc
	once    sync.Once
	// posts are the requests being served but GETs (which only listen): Close lets them
	// write their results before it ends the sessions.
	posts   sync.WaitGroup
	mu      sync.Mutex // orders the start of a request and Close; guards waiting
	stopped bool
	// waiting counts each person's calls that wait (see maxWaiting).
	waiting map[int64]int
}

// New returns the MCP server.
func New(opts Options) *Server {
	opts.Progress = cmp.Or(opts.Progress, 25*time.Second)
	opts.MaxWait = cmp.Or(opts.MaxWait, MaxWait)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts}
	s.closing, s.close = context.WithCancel(context.Background())
	// The SDK logs each session's start and end: only its warnings and errors go to the log.
	sdkLog := slog.New(warnings{opts.Logger.Handler()})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "parley", Title: "Parley", Version: "1"}, &mcp.ServerOptions{
		Instructions: instructions, Logger: sdkLog})
	s.addTools()
	// Sessions for 2025-11-25 and before, which name the client once, in initialize; none
	// for 2026-07-28, whose every request names it. A session idle for an hour ends.
	s.stateful = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: time.Hour, Logger: sdkLog, DisableLocalhostProtection: true})
	s.stateless = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true, Logger: sdkLog, DisableLocalhostProtection: true})
	return s
}

// instructions tell a client's model what the server is for.
const instructions = "Parley reaches a person for you: ask_person asks them something through a form they answer " +
	"in the browser or on their phone, request_approval asks them to approve an action before you take it. " +
	"Ask only when you cannot go on without them; give a request_id so that you can call again to wait."

// ServeHTTP refuses other sites' pages (403) and requests without a valid token (401),
// then serves MCP as the token's person.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" && !s.opts.OwnOrigin(r) {
		http.Error(w, "Refused: this request came from another site's page.", http.StatusForbidden)
		return
	}
	u, token, err := s.opts.Authenticate(r)
	if err != nil && domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		// The token could not be checked (the database is down): not the client's fault.
		s.opts.Logger.Error("mcp: token", "error", err)
		http.Error(w, "Parley cannot check the token right now; try again in a moment.", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
		http.Error(w, domain.ErrorMessage(err), http.StatusUnauthorized)
		return
	}
	who := &caller{user: u, token: token, base: s.opts.BaseURL(r)}
	r = r.WithContext(context.WithValue(r.Context(), callerKey{}, who))
	// The SDK keeps the person with a session (a session is its person's alone) and hands
	// them to each tool call.
	verified := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		c := r.Context().Value(callerKey{}).(*caller)
		return &auth.TokenInfo{UserID: c.key(), Expiration: time.Now().Add(24 * time.Hour), Extra: map[string]any{"caller": c}}, nil
	}, nil)
	h := s.stateful
	if v := r.Header.Get("MCP-Protocol-Version"); v >= "2026-07-28" {
		h = s.stateless
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		http.Error(w, "Parley is stopping: call again in a moment.", http.StatusServiceUnavailable)
		return
	}
	if r.Method != http.MethodGet {
		s.posts.Add(1)
		defer s.posts.Done()
	}
	s.mu.Unlock()
	if r.Method == http.MethodGet {
		// A listening stream (2025-11-25) ends when Parley stops, whatever its session does.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.closing, cancel)()
		r = r.WithContext(ctx)
	}
	verified(h).ServeHTTP(w, r)
}

// Close ends the calls that wait (each returns "pending": the question stays asked), lets
// their results out (for a second at most), then ends the sessions and their listening
// streams, so that Parley stops within its grace.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		s.close()
		written := make(chan struct{})
		go func() {
			s.posts.Wait()
			close(written)
		}()
		select {
		case <-written:
		case <-time.After(time.Second):
		}
		for ss := range s.mcp.Sessions() {
			ss.Close()
		}
	})
}

// caller is who calls: the token's person and the token's name.
type caller struct {
	user  domain.User
	token string
	base  string
}

// link is the address of a question's card.
func (c *caller) link(q domain.QuestionRecord) string { return c.base + q.Path() }

type callerKey struct{}

// key names the person to the SDK, which refuses a session's requests made as another.
func (c *caller) key() string { return c.user.Name }

// callerOf is the caller of a tool call.
func callerOf(req *mcp.CallToolRequest) *caller {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil
	}
	c, _ := req.Extra.TokenInfo.Extra["caller"].(*caller)
	return c
}

// warnings passes on a log's warnings and errors only.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnings) WithAttrs(as []slog.Attr) slog.Handler { return warnings{w.Handler.WithAttrs(as)} }
func (w warnings) WithGroup(name string) slog.Handler    { return warnings{w.Handler.WithGroup(name)} }
