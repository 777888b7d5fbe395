// Command provider runs the oidctest OpenID provider as its own process, for
// browser (Playwright) tests:
//
//	go run ./cmd/provider -addr 127.0.0.1:9998 -redirect-uri http://127.0.0.1:8080/auth/callback
//	go run ./cmd/provider -config provider.json
//
// Once it listens it prints one line "issuer=http://127.0.0.1:9998" on stdout.
// The control API (POST /oidctest/groups, /oidctest/rotate-key,
// /oidctest/wrong-audience, /oidctest/id-token-lifetime) is on unless -control=false.
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/parley-chat/parley/web/oidctest"
)

// config is the -config JSON file.
type config struct {
	Users   []oidctest.User `json:"users"`
	Clients []clientConfig  `json:"clients"`
}

type clientConfig struct {
	ID                          string   `json:"id"`
	Secret                      string   `json:"secret"`
	RedirectURIs                []string `json:"redirect_uris"`
	PostLogoutRedirectURIs      []string `json:"post_logout_redirect_uris"`
	IDTokenLifetime             string   `json:"id_token_lifetime,omitempty"` // Go duration, e.g. "1h", "-1m"
	ProfileClaimsOnlyInUserinfo bool     `json:"profile_claims_only_in_userinfo,omitempty"`
}

func defaultConfig() config {
	return config{
		Users: []oidctest.User{
			{Username: "alice", Password: "alice-pw", Name: "Alice Example", Email: "alice@example.test", Groups: []string{"parley-users", "parley-admins"}},
			{Username: "bob", Password: "bob-pw", Name: "Bob Example", Email: "bob@example.test", Groups: []string{"parley-users"}},
			{Username: "mallory", Password: "mallory-pw", Name: "Mallory Example", Email: "mallory@example.test", Groups: []string{}},
		},
		Clients: []clientConfig{{
			ID:                     "parley",
			Secret:                 "parley-secret",
			RedirectURIs:           []string{"http://127.0.0.1:8080/auth/callback"},
			PostLogoutRedirectURIs: []string{"http://127.0.0.1:8080/"},
		}},
	}
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "provider:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9998", "listen address (127.0.0.1:0 for a random port)")
	configPath := fs.String("config", "", "JSON file with users and clients (default: built-in alice/bob/mallory and client parley)")
	control := fs.Bool("control", true, "serve the /oidctest/ control API")
	printConfig := fs.Bool("print-config", false, "print the effective configuration as JSON and exit")
	var redirects, postLogouts listFlag
	fs.Var(&redirects, "redirect-uri", "replace the first client's redirect URIs (repeatable)")
	fs.Var(&postLogouts, "post-logout-uri", "replace the first client's post-logout redirect URIs (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	cfg := defaultConfig()
	if *configPath != "" {
		b, err := os.ReadFile(*configPath)
		if err != nil {
			return err
		}
		cfg = config{}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return fmt.Errorf("%s: %w", *configPath, err)
		}
	}
	if len(cfg.Clients) == 0 {
		return errors.New("no clients configured")
	}
	if len(redirects) > 0 {
		cfg.Clients[0].RedirectURIs = redirects
	}
	if len(postLogouts) > 0 {
		cfg.Clients[0].PostLogoutRedirectURIs = postLogouts
	}
	if *printConfig {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(cfg)
	}

	opts := oidctest.Options{Users: cfg.Users, Addr: *addr, ControlAPI: *control}
	for _, c := range cfg.Clients {
		var lifetime time.Duration
		if c.IDTokenLifetime != "" {
			var err error
			if lifetime, err = time.ParseDuration(c.IDTokenLifetime); err != nil {
				return fmt.Errorf("client %s: id_token_lifetime: %w", c.ID, err)
			}
		}
		opts.Clients = append(opts.Clients, oidctest.Client{
			ID: c.ID, Secret: c.Secret, RedirectURIs: c.RedirectURIs, PostLogoutRedirectURIs: c.PostLogoutRedirectURIs,
			IDTokenLifetime: lifetime, ProfileClaimsOnlyInUserinfo: c.ProfileClaimsOnlyInUserinfo,
		})
	}
	p, err := oidctest.Start(opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "issuer=%s\n", p.Issuer)
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.Shutdown(shutdownCtx)
}
