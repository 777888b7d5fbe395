// Command parley serves Parley: human-in-the-loop agent chat in one binary with SQLite inside.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
	_ "time/tzdata" // people's time zones, on machines without a zone database

	"github.com/parley-chat/parley/bench"
	"github.com/parley-chat/parley/chat"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/notify"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd, _ := command(os.Args[1:]); cmd == "serve" {
		go exitAfterGrace(ctx, stop)
	}
	if err := run(ctx, os.Args[1:], os.Getenv, stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "parley:", err)
		}
		os.Exit(1)
	}
}

// Config is everything `parley serve` can be told, by flag or environment variable.
type Config struct {
	Addr      string
	DB        string
	LogLevel  string
	LogFormat string
	// ConfigFile declares model-backed agents (TOML).
	ConfigFile string
	// A2A serves the agents over A2A JSON-RPC to the clients of `parley a2a-client`; A2AToken,
	// the one shared token of older Parleys, is served as the client "default".
	A2A              bool
	A2AToken         string
	StructuredOutput bool
	// Pace is the delay between streamed tokens of the built-in agents.
	Pace time.Duration
	// Uploads bound the files attached to one message.
	Uploads web.UploadLimits
	// Auth is how people sign in; Limits cap each person's streams and messages.
	Auth   web.AuthOptions
	Limits web.Limits
	// Synchronous is SQLite's synchronous setting: normal (the default) or full.
	Synchronous string
	// SkipDBCheck starts without SQLite's quick_check of the database file (--skip-db-check).
	SkipDBCheck bool
	// Lease is how long an instance's runs stay its own without a renewal (PostgreSQL).
	Lease time.Duration
	// DBPool is how many connections to PostgreSQL the instance holds at most for its work.
	DBPool int
	// Metrics says who may read GET /metrics (--metrics, PARLEY_METRICS_TOKEN).
	Metrics web.MetricsOptions
	// PublicURL is Parley's address as people reach it, for the links notifications carry
	// (default: the address it listens on).
	PublicURL string
	// ChannelNetworks are the networks besides the public internet that channels (webhooks,
	// ntfy, push endpoints) may reach (--channel-networks).
	ChannelNetworks notify.Networks
	// PushSubject is how push services may reach the operator (VAPID's "sub"): a mailto: or
	// https: address (--push-subject).
	PushSubject string
}

// shutdownGrace is how long `parley serve` takes at most to stop once told to (SIGTERM,
// SIGINT), whatever is pending: streams end, running steps are cut off (their questions
// asked mid-call expire), tool servers close, and the process exits.
const shutdownGrace = 10 * time.Second

// exitAfterGrace ends the process once the grace after a stop signal is over, if the
// shutdown has not ended it by then; a second signal ends it at once.
func exitAfterGrace(ctx context.Context, stop func()) {
	<-ctx.Done()
	stop() // the next signal has its default effect
	time.Sleep(shutdownGrace)
	fmt.Fprintf(os.Stderr, "parley: still stopping after %s; exiting now\n", shutdownGrace)
	os.Exit(1)
}

// command splits the subcommand off args; serve is the default.
func command(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "serve", args
}

// run parses args and runs the subcommand; serve is the default.
func run(ctx context.Context, args []string, getenv func(string) string, stdio stdio) error {
	cmd, args := command(args)
	switch cmd {
	case "serve":
		cfg, err := parseServe(args, getenv, stdio.err)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, getenv, stdio.err)
	case "user":
		return runUser(ctx, args, getenv, stdio)
	case "token":
		return runToken(ctx, args, getenv, stdio)
	case "group":
		return runGroup(ctx, args, getenv, stdio)
	case "a2a-client":
		return runA2AClient(ctx, args, getenv, stdio)
	case "migrate-to":
		return runMigrateTo(ctx, args, getenv, stdio)
	case "export":
		return runExport(ctx, args, getenv, stdio)
	case "chat":
		return chat.Run(ctx, args, getenv, stdio.in, stdio.out, stdio.err)
	case "bench":
		return bench.Run(ctx, args, stdio.out, stdio.err)
	case "bench-serve":
		return bench.ServePeer(ctx, args, stdio.out)
	case "mcp-demo":
		return runMCPDemo(ctx, args, stdio)
	case "help":
		fmt.Fprintln(stdio.err, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q (try: parley help)", cmd)
}

const usage = `usage:
  parley [serve] [flags]                         serve Parley (parley serve -h for flags)
  parley user add NAME [--role staff|user] [--password-stdin]
  parley user set-role NAME staff|user
  parley user reset-password NAME [--password-stdin]
  parley user list
  parley token add NAME --user U                 make an access token (printed once, alone on stdout)
  parley token list --user U
  parley token revoke NAME --user U
  parley group add GROUP PERSON... [--askers]    put people in a group agents may ask (--askers: may only ask it)
  parley group remove GROUP [PERSON...]          take people out; with nobody named, delete the group
  parley group list [GROUP]
  parley a2a-client add NAME                     make an A2A client's token (printed once, alone on stdout)
  parley a2a-client list
  parley a2a-client revoke NAME                  refuse its token; its open streams end
  parley migrate-to [--db FILE] postgres://...   move the install to a new, empty PostgreSQL database (stop serve first)
  parley export --jsonl [--since DATE] [--agent NAME] [--label NAME] [--with-notes]
                                                 conversations as JSON Lines to evaluate agents with (docs/eval.md)
  parley chat [flags] [MESSAGE]                  chat with an agent over the API (parley chat -h)
  parley bench [flags]                           measure streaming (parley bench -h)
  parley mcp-demo [--http ADDR [--stateful]]     a demo MCP tool server (stdio, or HTTP at ADDR/mcp)
The user, token, group, a2a-client and export commands take --db (PARLEY_DB) too, and may run beside a server
on the same database (never two servers); they do not migrate a database a server holds.
Without --password-stdin a password is made up and printed once.`

// stdio is where a command reads and writes: a password on in, results on out, logs and
// errors on err.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func parseServe(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	env := func(name, def string) string { return envOr(getenv, name, def) }
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.Addr, "addr", env("PARLEY_ADDR", "127.0.0.1:8080"), "listen address; port 0 picks a free port (PARLEY_ADDR)")
	fs.StringVar(&cfg.DB, "db", env("PARLEY_DB", "./parley.db"), "SQLite database file, or a postgres:// URL for several instances (PARLEY_DB); one process per SQLite file")
	fs.StringVar(&cfg.Synchronous, "synchronous", getenv("PARLEY_SYNCHRONOUS"),
		"normal: a commit survives a crash, power loss may undo the last ones; full: every commit is on disk when made, slower (PARLEY_SYNCHRONOUS, default normal)")
	fs.BoolVar(&cfg.SkipDBCheck, "skip-db-check", isTrue(getenv("PARLEY_SKIP_DB_CHECK")),
		"start without SQLite's quick_check of the database file, which refuses a damaged file and takes up to 30s on a large one (PARLEY_SKIP_DB_CHECK=1)")
	fs.StringVar(&cfg.LogLevel, "log-level", env("PARLEY_LOG_LEVEL", "info"), "debug, info, warn or error (PARLEY_LOG_LEVEL)")
	fs.StringVar(&cfg.LogFormat, "log-format", env("PARLEY_LOG_FORMAT", "text"), "text or json (PARLEY_LOG_FORMAT)")
	fs.StringVar(&cfg.ConfigFile, "config", env("PARLEY_CONFIG", ""), "agents config file, TOML (PARLEY_CONFIG)")
	fs.StringVar(&cfg.PublicURL, "public-url", env("PARLEY_PUBLIC_URL", ""), "Parley's address as people reach it, for the links in notifications, e.g. https://parley.example (PARLEY_PUBLIC_URL; default the listen address)")
	networks := fs.String("channel-networks", getenv("PARLEY_CHANNEL_NETWORKS"),
		"networks besides the public internet that webhooks, ntfy topics and push endpoints may reach, as CIDR prefixes, e.g. 10.1.0.0/16,192.168.5.7/32 (PARLEY_CHANNEL_NETWORKS; default none: loopback, private, link-local and other special addresses are refused)")
	fs.StringVar(&cfg.PushSubject, "push-subject", getenv("PARLEY_PUSH_SUBJECT"),
		"how push services may reach you, signed into every Web Push: a mailto: or https: address (PARLEY_PUSH_SUBJECT; default --public-url when https, else the [smtp] sender; Apple's push service refuses made-up ones)")
	fs.BoolVar(&cfg.A2A, "a2a", isTrue(getenv("PARLEY_A2A")), "serve the agents over A2A to the clients made with parley a2a-client (PARLEY_A2A=1)")
	cfg.A2AToken = getenv("PARLEY_A2A_TOKEN")
	cfg.StructuredOutput = isTrue(getenv("ENABLE_STRUCTURED_OUTPUT"))
	pace, err := time.ParseDuration(env("PARLEY_BUILTIN_PACE", "25ms"))
	if err != nil {
		return cfg, fmt.Errorf("PARLEY_BUILTIN_PACE: %w", err)
	}
	fs.DurationVar(&cfg.Pace, "builtin-pace", pace, "delay between streamed tokens of the built-in agents (PARLEY_BUILTIN_PACE)")
	lease, err := time.ParseDuration(env("PARLEY_LEASE", store.Lease.String()))
	if err != nil || lease < time.Second {
		return cfg, fmt.Errorf("PARLEY_LEASE %q: a duration of a second or more", env("PARLEY_LEASE", ""))
	}
	fs.DurationVar(&cfg.Lease, "lease", lease, "on PostgreSQL, how long an instance that stops renewing keeps its runs before another takes them over (PARLEY_LEASE)")
	pool, err := strconv.Atoi(env("PARLEY_DB_POOL", strconv.Itoa(store.PoolSize)))
	if err != nil || pool < 2 {
		return cfg, fmt.Errorf("PARLEY_DB_POOL %q: a number of connections, 2 or more", getenv("PARLEY_DB_POOL"))
	}
	fs.IntVar(&cfg.DBPool, "db-pool", pool, "on PostgreSQL, connections each instance holds at most for its reads and writes, besides one to listen, one to renew its lease and two for counters (PARLEY_DB_POOL)")
	maxUpload, err := parseBytes(env("PARLEY_MAX_UPLOAD", "10MB"))
	if err != nil {
		return cfg, fmt.Errorf("PARLEY_MAX_UPLOAD: %w", err)
	}
	cfg.Uploads.MaxBytes = maxUpload
	fs.Func("max-upload", "largest file a person can attach, e.g. 10MB or 512KB (PARLEY_MAX_UPLOAD, default 10MB)", func(s string) error {
		n, err := parseBytes(s)
		cfg.Uploads.MaxBytes = n
		return err
	})
	maxFiles, err := strconv.Atoi(env("PARLEY_MAX_FILES", strconv.Itoa(web.DefaultMaxFiles)))
	if err != nil || maxFiles < 1 {
		return cfg, fmt.Errorf("PARLEY_MAX_FILES: %q is not a positive number", getenv("PARLEY_MAX_FILES"))
	}
	fs.IntVar(&cfg.Uploads.MaxFiles, "max-files", maxFiles, "most files attached to one message (PARLEY_MAX_FILES)")
	if err := authFlags(fs, &cfg, getenv); err != nil {
		return cfg, err
	}
	metrics := metricsFlag(fs, &cfg, getenv)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := checkAuth(cfg); err != nil {
		return cfg, err
	}
	if cfg.Lease < time.Second {
		return cfg, fmt.Errorf("--lease %s: a second or more", cfg.Lease)
	}
	if cfg.DBPool < 2 {
		return cfg, fmt.Errorf("--db-pool %d: 2 or more", cfg.DBPool)
	}
	switch strings.ToLower(cfg.Synchronous) {
	case "", "normal", "full":
	default:
		return cfg, fmt.Errorf("--synchronous %q: use normal or full", cfg.Synchronous)
	}
	if err := setMetrics(&cfg, *metrics); err != nil {
		return cfg, err
	}
	if cfg.PublicURL != "" {
		if _, ok := domain.WebURL(cfg.PublicURL); !ok {
			return cfg, fmt.Errorf("--public-url %q: give Parley's address as people reach it, such as https://parley.example", cfg.PublicURL)
		}
	}
	if cfg.PushSubject != "" && !notify.Subject(cfg.PushSubject) {
		return cfg, fmt.Errorf("--push-subject %q: give a mailto: or https: address of yours, such as mailto:ops@example.com", cfg.PushSubject)
	}
	if cfg.ChannelNetworks, err = notify.ParseNetworks(*networks); err != nil {
		return cfg, fmt.Errorf("--channel-networks: %w", err)
	}
	if cfg.Uploads.MaxFiles < 1 {
		return cfg, fmt.Errorf("--max-files must be at least 1")
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return cfg, nil
}

// cpuProfile writes a CPU profile of the process to path between a SIGUSR1 and a SIGUSR2,
// and a heap profile next to it at each SIGUSR2 (parley bench asks for them with
// PARLEY_CPUPROFILE, and profiles the runs it measures).
func cpuProfile(path string) (stop func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	done := make(chan struct{})
	go func() {
		var f *os.File
		for {
			select {
			case <-done:
				if f != nil {
					pprof.StopCPUProfile()
					f.Close()
				}
				return
			case s := <-sig:
				switch {
				case s == syscall.SIGUSR1 && f == nil:
					var err error
					if f, err = os.Create(path); err == nil && pprof.StartCPUProfile(f) != nil {
						f.Close()
						f = nil
					}
				case s == syscall.SIGUSR2:
					if f != nil {
						pprof.StopCPUProfile()
						f.Close()
						f = nil
					}
					runtime.GC() // the heap profile shows what is live
					if h, err := os.Create(strings.TrimSuffix(path, ".prof") + ".heap"); err == nil {
						pprof.Lookup("heap").WriteTo(h, 0)
						h.Close()
					}
				}
			}
		}
	}()
	return func() { signal.Stop(sig); close(done) }
}

// parseBytes reads a size: 10MB, 512KB, 2GB or plain bytes (decimal units, as shown).
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1<<40 {
		return 0, fmt.Errorf("%q is not a size such as 10MB or 512KB", s)
	}
	return int64(n * float64(mult)), nil
}

// envOr is the environment variable name, or def when it is empty or not set.
func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// isTrue reads a boolean environment variable: 1, true, yes or on.
func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func newLogger(cfg Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", cfg.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch cfg.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", cfg.LogFormat)
}
