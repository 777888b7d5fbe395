package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/config"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/views"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/inbound/a2aserver"
)

func serve(ctx context.Context, cfg Config, getenv func(string) string, stderr io.Writer) error {
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	agents := builtin.All(builtin.Options{Pace: cfg.Pace})
	taken := map[string]bool{}
	for _, a := range agents {
		taken[a.Info().Name] = true
	}
	cfgs, problems, err := config.LoadAgents(cfg.ConfigFile, getenv)
	if err != nil {
		return err
	}
	b := config.BuildAgentsWith(cfgs, getenv, taken)
	configured, policies := b.Agents, b.Policies
	problems = append(problems, b.Problems...)
	for _, p := range problems {
		log.Error("agent not available", "problem", p)
	}
	agents = append(agents, configured...)
	if isTrue(getenv("PARLEY_BENCH_AGENT")) {
		agents = append(agents, builtin.NewBench())
	}
	if path := getenv("PARLEY_CPUPROFILE"); path != "" {
		defer cpuProfile(path)()
	}
	var a2aOpts *a2aserver.Options
	if cfg.A2A {
		settings, err := config.LoadA2ASettings(cfg.ConfigFile)
		if err != nil {
			return err
		}
		a2aOpts = &a2aserver.Options{LegacyToken: cfg.A2AToken, StructuredOutput: cfg.StructuredOutput || settings.StructuredOutput, DefaultAgent: "platform-engineer"}
	}
	settings, err := config.LoadIntakeSettings(cfg.ConfigFile)
	if err != nil {
		return err
	}
	smtpServer, err := config.LoadSMTP(cfg.ConfigFile, getenv)
	if err != nil {
		return err
	}
	db, err := store.OpenWith(ctx, cfg.DB, store.Options{Holder: "parley serve", Synchronous: cfg.Synchronous, Pool: cfg.DBPool, SkipCheck: cfg.SkipDBCheck, Logger: log})
	if err != nil {
		return err
	}
	db.Lease = cfg.Lease

	built := map[string]bool{}
	for _, a := range configured {
		built[a.Info().Name] = true
	}
	analyzer, analyzers := config.BuildAnalyzers(cfgs, built, settings, getenv, log)
	for name, look := range b.Looks {
		if look.Icon != "" && !views.HasIcon(look.Icon) {
			log.Warn("agent icon not known: its back end's is drawn", "agent", name, "icon", look.Icon)
		}
	}
	for name, note := range b.Notes {
		log.Warn("agent for staff only", "agent", name, "why", note)
	}
	runner := runner.New(runner.Options{
		Ledger:    db,
		Agents:    agents,
		Logger:    log,
		Now:       db.Now,
		Analyzer:  analyzer,
		Analyzers: analyzers,
		Policies:  policies,
		Looks:     b.Looks,
	})
	logAccess(ctx, log, db, policies)
	pools := startTools(configured, runner, log)
	closeTools := sync.OnceFunc(func() {
		var wg sync.WaitGroup
		for _, p := range pools {
			wg.Go(p.Close)
		}
		wg.Wait()
	})
	defer closeTools()
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		db.Close()
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	publicURL := cfg.PublicURL
	if publicURL == "" {
		publicURL = "http://" + l.Addr().String()
		if host, _, _ := net.SplitHostPort(l.Addr().String()); net.ParseIP(host).IsUnspecified() {
			log.Warn("notifications link to " + publicURL + ", which nobody can open: set --public-url to Parley's address as people reach it")
		}
	}
	owner, err := a2aAccount(ctx, db)
	if err != nil {
		l.Close()
		db.Close()
		return err
	}
	srv := web.NewServer(web.NewServerOptions{
		Notify:   web.NotifyOptions{PublicURL: publicURL, SMTP: smtpServer, Networks: cfg.ChannelNetworks, PushSubject: cfg.PushSubject},
		DB:       db,
		Now:      db.Now,
		Runner:   runner,
		Logger:   log,
		Problems: problems,
		Backends: backendsOf(cfgs),
		LiveProblems: func() []string {
			var out []string
			for _, p := range pools {
				out = append(out, p.Problems()...)
			}
			return out
		},
		Uploads: cfg.Uploads,
		Auth:    cfg.Auth,
		Limits:  cfg.Limits,
		Metrics: cfg.Metrics,
	})
	db.OnAuthChange(srv.CheckStreams) // a change made in another instance or by a command

	var a2a *a2aserver.Server
	if a2aOpts != nil {
		a2aOpts.CheckFile, a2aOpts.MaxFiles, a2aOpts.Logger = srv.Uploads().Check, srv.Uploads().MaxFiles, log
		a2aOpts.Watch = srv.Watch // a revoked client's open requests end as other streams whose access went away
		a2a = a2aserver.New(db, runner, *a2aOpts)
		srv.MountA2A(a2a)
	}
	if err := start(ctx, srv, runner, a2a, owner); err != nil {
		l.Close()
		db.Close()
		return err
	}
	if (cfg.Auth.Mode == web.AuthLocal || cfg.Auth.Mode == web.AuthOIDC) && !web.LoopbackHost(cfg.Addr) && len(cfg.Auth.TrustedProxies) == 0 {
		log.Warn("signing in over plain HTTP on an address others can reach: put Parley behind a proxy that terminates TLS, " +
			"and name it with --trusted-proxies, so that passwords and session cookies do not travel in clear")
	}
	if cfg.Metrics.Open && !web.LoopbackHost(cfg.Addr) {
		log.Warn("GET /metrics is open to anyone who can reach " + cfg.Addr + ": keep it on a private network, or use --metrics token")
	}
	log.Info("listening on http://"+l.Addr().String(), "db", store.Describe(cfg.DB))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		stopCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace/2-time.Second)
		defer cancel()
		shutdown(stopCtx, srv, runner, a2a)
		closeTools()
		db.Close()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownGrace.String())
	// The steps stop first, so that a question a tool server or a coding agent asks on its
	// live connection expires as theirs (a coding agent's turn is cancelled, 2 s at most);
	// the tool servers and the agents' processes close in what is left of the grace (mcp's
	// closeWait, 4 s, and acp's, 3 s, at most, side by side), and the database last.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace/2-time.Second)
	defer cancel()
	if err := shutdown(shutdownCtx, srv, runner, a2a); err != nil {
		// Steps may still be writing: leave the database to the process exit.
		closeTools()
		return fmt.Errorf("shutdown: %w", err)
	}
	closeTools()
	err = <-errc
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// a2aAccount makes Parley's own account, which owns the conversations of A2A clients (made
// whether or not A2A is served, so that nobody can take its name).
func a2aAccount(ctx context.Context, db *store.DB) (domain.User, error) {
	owner, err := db.EnsureUser(ctx, domain.A2AAccount, domain.RoleService)
	if err != nil {
		return owner, fmt.Errorf("a2a account: %w", err)
	}
	if owner.Role != domain.RoleService {
		return owner, fmt.Errorf("the account %q belongs to a person, but Parley needs it for A2A: rename or remove it", domain.A2AAccount)
	}
	return owner, nil
}

// start starts the web server's own work, then the runner's (it recovers the ledger and
// takes up pending work; the metrics count what that resolves), then the A2A server, if
// any, which takes up the tasks a stop interrupted.
func start(ctx context.Context, srv *web.Server, runner *runner.Runner, a2a *a2aserver.Server, owner domain.User) error {
	if err := srv.Start(ctx); err != nil {
		return err
	}
	if err := runner.Start(ctx); err != nil {
		return err
	}
	if a2a != nil {
		return a2a.Start(ctx, owner)
	}
	return nil
}

// shutdown stops what start started, within ctx: the A2A server's streams end (each telling
// its client that the task goes on), the web server stops taking requests and ends its
// streams, then the running agent steps are interrupted (partial text kept) and waited for.
func shutdown(ctx context.Context, srv *web.Server, runner *runner.Runner, a2a *a2aserver.Server) error {
	if a2a != nil {
		a2a.Close()
	}
	err := srv.Shutdown(ctx)
	if rerr := runner.Stop(ctx); rerr != nil {
		return fmt.Errorf("agent steps still running: %w", rerr)
	}
	return err
}
