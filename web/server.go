// Package web serves Parley's pages and streams over HTTP with echo, rendering views.
package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
	"github.com/parley-chat/parley/notify"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/static"
	"github.com/parley-chat/parley/web/inbound/mcpserver"
)

// Server is Parley's HTTP front: pages, form posts and the SSE streams.
type Server struct {
	echo   *echo.Echo
	static *staticFiles // the embedded assets, compressed once
	// The database, in the groups the handlers need (see Store).
	ledger    Ledger
	questions Questions
	feedback  Feedbacks
	queue     Queue
	desk      Desk
	eval      eval.Source
	backends  func(agent string) string
	library   Library
	accounts  Accounts
	tokens    AccessTokens
	review    Review
	groups    Groups
	ids       Identities
	health    Health
	// now is the clock of pages and limits.
	now       func() time.Time
	runner    *runner.Runner
	hub       *runner.Hub
	log       *slog.Logger
	heartbeat time.Duration
	problems  []string
	// liveProblems are the problems that come and go.
	liveProblems func() []string
	mcp          *mcpserver.Server
	// oidc is Parley as a client of the identity provider (AuthOIDC), nil otherwise.
	oidc *oidcClient
	// proxyGroups is the groups header each person last came with (AuthProxy), so that
	// their groups are synced when it changes, not at every request.
	proxyGroups sync.Map
	notifier    *notify.Notifier
	networks    notify.Networks
	pushKeys    *notify.Keys
	pageOrigin  *http.CrossOriginProtection
	publicURL   string
	// email says whether an SMTP server is configured, for the channels' forms.
	email   bool
	uploads UploadLimits
	auth    AuthOptions
	limits  Limits
	// logins counts failed sign-ins, signups new accounts, messages what people send, per key;
	// providerSignIns the sign-ins through the identity provider begun, providerCallbacks
	// come back, per address (each is a write nobody signed in asks for).
	logins, signups, messages, providerSignIns, providerCallbacks limiter
	// confirmMails counts the confirmation links a person has mailed, per hour.
	confirmMails limiter
	streams      streamCounter
	// live are the open streams, each with the check that its person may go on.
	live openStreams
	// metrics are what GET /metrics serves; metricsAccess says to whom.
	metrics       *metrics
	metricsAccess MetricsOptions
	// passwords hashes new passwords; hashSlots bounds the hashes computed at once.
	passwords *domain.PasswordHasher
	hashSlots chan struct{}
	http      *http.Server
	handler   http.Handler
	// closed ends every SSE stream when the server shuts down; streamsWG waits for them.
	closed    context.Context
	close     context.CancelFunc
	streamsMu sync.Mutex // orders the start of a stream and the shutdown's wait
	streamsWG sync.WaitGroup
	fresh     freshConns
}

// NewServerOptions configures NewServer.
type NewServerOptions struct {
	// DB is Parley's database (a *store.DB).
	DB Store
	// Now is the clock of pages and limits (default time.Now; tests give the database's).
	Now    func() time.Time
	Logger *slog.Logger
	// Runner runs the agents people talk to, on DB. The server hands it work; whoever made
	// it starts and stops it (cmd/parley, around the server's Start and Shutdown).
	Runner *runner.Runner
	// Problems are configuration errors (an agent that could not be built), shown on the home page.
	Problems []string
	// Backends names each agent's back end (builtin, openai, a2a, agui, acp), for the export
	// for evaluation; nil names none ("unknown").
	Backends func(agent string) string
	// LiveProblems are problems as they stand now (a tool server that is down), shown after them.
	LiveProblems func() []string
	// Uploads bound attached files (zero fields take the defaults).
	Uploads UploadLimits
	// Heartbeat is the interval of SSE keep-alive comments (default 15 s).
	Heartbeat time.Duration
	// Auth is how people sign in (local accounts by default).
	Auth AuthOptions
	// Limits cap each person's streams, messages and sign-in attempts.
	Limits Limits
	// Passwords hashes new passwords (default domain.Passwords; tests make it cheap).
	Passwords *domain.PasswordHasher
	// Metrics says who may read GET /metrics (nobody by default: no such route).
	Metrics MetricsOptions
	// MCP tunes the MCP server at /mcp (zero fields take the defaults).
	MCP MCPOptions
	// Notify delivers word of questions to people's and groups' channels.
	Notify NotifyOptions
}

// NotifyOptions say how word of questions reaches people outside the tab (see notify).
type NotifyOptions struct {
	// PublicURL is Parley's address as people reach it: the notifications' links start
	// with it ("https://parley.example").
	PublicURL string
	// SMTP sends the emails; nil: email channels fail, saying so.
	SMTP *notify.SMTP
	// Networks are the networks besides the public internet that channels may reach.
	Networks notify.Networks
	// PushSubject is how push services may reach the operator (a mailto: or https:
	// address); empty: the https public URL, else the SMTP sender.
	PushSubject string
	// Backoff is the wait before a failed delivery's first retry (default 30 s).
	Backoff time.Duration
}

// MCPOptions tune the MCP server (see mcpserver.Options).
type MCPOptions struct {
	Progress, MaxWait time.Duration
	AllowEmail        bool
}

// NewServer builds the route table around the runner and the store.
func NewServer(opts NewServerOptions) *Server {
	db := opts.DB
	s := &Server{ledger: db, questions: db, feedback: db, queue: db, desk: db, eval: db, library: db, accounts: db, tokens: db, review: db, groups: db, ids: db, health: db,
		now: opts.Now, log: opts.Logger, runner: opts.Runner, hub: opts.Runner.Hub(), heartbeat: opts.Heartbeat, problems: opts.Problems, liveProblems: opts.LiveProblems,
		backends: opts.Backends}
	s.closed, s.close = context.WithCancel(context.Background())
	s.live.kick = make(chan struct{}, 1)
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.uploads = opts.Uploads
	if s.uploads.MaxBytes <= 0 {
		s.uploads.MaxBytes = DefaultMaxUploadBytes
	}
	if s.uploads.MaxFiles <= 0 {
		s.uploads.MaxFiles = DefaultMaxFiles
	}
	s.email = opts.Notify.SMTP != nil
	s.networks, s.pushKeys, s.publicURL = opts.Notify.Networks, notify.NewKeys(db), strings.TrimRight(opts.Notify.PublicURL, "/")
	s.notifier = notify.New(notify.Options{Outbox: db, BaseURL: opts.Notify.PublicURL, SMTP: opts.Notify.SMTP, Backoff: opts.Notify.Backoff, Logger: s.log,
		Networks: opts.Notify.Networks, Push: notify.Push{Keys: s.pushKeys, Subject: pushSubject(opts.Notify)}})
	if u, err := url.Parse(opts.Notify.PublicURL); err == nil && !LoopbackHost(u.Host) && !notify.Subject(pushSubject(opts.Notify)) {
		s.log.Warn("Web Push is signed with a made-up address, which Apple's push service refuses: set --push-subject to a mailto: or https: address of yours")
	}
	opts.Runner.SetNotify(s.notifier.Wake) // an agent's approval gate told to its approvers
	s.mcp = mcpserver.New(mcpserver.Options{Runner: opts.Runner, Authenticate: s.tokenPerson, Group: db.Group, GroupsOf: db.GroupsOf, Notify: s.notifier.Wake, OwnOrigin: s.ownOrigin, BaseURL: s.baseURL,
		Progress: opts.MCP.Progress, MaxWait: opts.MCP.MaxWait, AllowEmail: opts.MCP.AllowEmail, Logger: s.log})
	if s.heartbeat == 0 {
		s.heartbeat = 15 * time.Second
	}
	s.auth, s.limits = opts.Auth.withDefaults(), opts.Limits.withDefaults()
	if s.auth.Mode == AuthOIDC {
		s.oidc = newOIDCClient(s.auth.OIDC, opts.Notify.PublicURL, s.log)
		s.auth.OIDC = s.oidc.opts
	}
	s.logins = newLimiter(db, "logins", s.limits.LoginAttempts, s.limits.LoginWindow, s.now, s.log)
	s.signups = newLimiter(db, "signups", 5, time.Hour, s.now, s.log)
	s.confirmMails = newLimiter(db, "confirm-mails", confirmMailsPerHour, time.Hour, s.now, s.log)
	s.messages = newLimiter(db, "messages", s.limits.MessagesPerMinute, time.Minute, s.now, s.log)
	s.providerSignIns = newLimiter(db, "provider-sign-ins", s.limits.ProviderSignIns, time.Minute, s.now, s.log)
	s.providerCallbacks = newLimiter(db, "provider-callbacks", s.limits.ProviderSignIns, time.Minute, s.now, s.log)
	if sl, ok := db.(SharedLimits); ok && sl.Shared() {
		s.streams.shared, s.streams.log = sl, s.log
	}
	s.passwords = cmp.Or(opts.Passwords, domain.Passwords)
	s.hashSlots = make(chan struct{}, max(2, runtime.NumCPU()))
	s.metrics, s.metricsAccess = newMetrics(db, db, s.hub, s.log), opts.Metrics
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: it would cut SSE streams. Pages are small and fast.
		ConnState: s.fresh.track,
	}
	s.echo = echo.New()
	s.echo.HideBanner, s.echo.HidePort = true, true
	s.echo.HTTPErrorHandler = s.handleError
	s.static = newStaticFiles(static.FS)
	s.routes()
	s.handler = compressResponses(s.crossOriginProtection(s.echo))
	return s
}

// ServeHTTP makes the server usable with httptest.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Start starts the server's own work: the metrics count the questions resolved from now
// on, the notifier delivers, and open streams are checked against their people's access.
// It comes before the runner's Start, so that the questions a restart expires are counted.
func (s *Server) Start(ctx context.Context) error {
	s.log.Info("sign-in", "auth", s.auth.authDescription())
	if err := s.metrics.ledger.start(ctx); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	s.notifier.Start()
	go s.sweepStreams()
	if s.oidc != nil {
		go s.oidc.discover(s.closed) // Parley serves meanwhile: signing in says the provider is not there yet
	}
	return nil
}

// Serve accepts connections on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	if err := s.http.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting requests and ends the streams, within ctx. The runner's steps go
// on: whoever started the runner stops it next (cmd/parley), and closes a mounted A2A server
// first, so that its streams end too.
func (s *Server) Shutdown(ctx context.Context) error {
	s.streamsMu.Lock()
	s.close()
	s.streamsMu.Unlock()
	s.mcp.Close()
	s.notifier.Stop()
	s.fresh.close()
	err := s.http.Shutdown(ctx)
	s.streamsWG.Wait() // streams that took their connection over end at once, once closed
	return err
}

// Uploads are the limits of attached files in force (the defaults filled in): an A2A
// server checks the files its clients send with them.
func (s *Server) Uploads() UploadLimits { return s.uploads }
