package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/web"
)

// authFlags declares the flags of signing in and of the per-person limits, each with its
// environment twin as the default.
func authFlags(fs *flag.FlagSet, cfg *Config, getenv func(string) string) error {
	env := func(name, def string) string { return envOr(getenv, name, def) }
	fs.StringVar(&cfg.Auth.Mode, "auth", env("PARLEY_AUTH", web.AuthLocal), "how people sign in: local, proxy or none (PARLEY_AUTH)")
	signup := env("PARLEY_SIGNUP", "true")
	cfg.Auth.Signup = isTrue(signup)
	fs.BoolVar(&cfg.Auth.Signup, "signup", cfg.Auth.Signup, "with --auth local, people may make their own accounts (PARLEY_SIGNUP)")
	cfg.Auth.StaffAnswer = isTrue(getenv("PARLEY_STAFF_ANSWER"))
	fs.BoolVar(&cfg.Auth.StaffAnswer, "staff-answer", cfg.Auth.StaffAnswer, "staff may answer questions on a person's behalf, audited (PARLEY_STAFF_ANSWER)")
	var err error
	durations := []struct {
		flag, env, def, usage string
		dst                   *time.Duration
	}{
		{"session-idle", "PARLEY_SESSION_IDLE", "30m", "a session ends after this long without a request", &cfg.Auth.Session.Idle},
		{"session-max", "PARLEY_SESSION_MAX", "12h", "a session ends this long after sign-in, whatever happens", &cfg.Auth.Session.Max},
	}
	for _, d := range durations {
		if *d.dst, err = time.ParseDuration(env(d.env, d.def)); err != nil || *d.dst <= 0 {
			return fmt.Errorf("%s: %q is not a duration such as 30m or 12h", d.env, getenv(d.env))
		}
		fs.DurationVar(d.dst, d.flag, *d.dst, d.usage+" ("+d.env+")")
	}
	if cfg.Auth.TrustedProxies, err = parsePrefixes(getenv("PARLEY_TRUSTED_PROXIES")); err != nil {
		return fmt.Errorf("PARLEY_TRUSTED_PROXIES: %w", err)
	}
	fs.Func("trusted-proxies", "addresses (IPs or CIDR ranges, comma-separated) of the reverse proxies whose user and X-Forwarded-For headers are believed (PARLEY_TRUSTED_PROXIES)", func(s string) error {
		p, err := parsePrefixes(s)
		cfg.Auth.TrustedProxies = p
		return err
	})
	cfg.Auth.ProxyHeaders = splitList(getenv("PARLEY_PROXY_HEADER"))
	fs.Func("proxy-header", "with --auth proxy, the header naming the person (default Remote-User; X-Forwarded-User for oauth2-proxy); several, comma-separated, must agree (PARLEY_PROXY_HEADER)", func(s string) error {
		cfg.Auth.ProxyHeaders = splitList(s)
		return nil
	})
	ints := []struct {
		flag, env string
		def       int
		usage     string
		dst       *int
	}{
		{"max-streams", "PARLEY_MAX_STREAMS", 12, "most conversation pages one person may have open at once", &cfg.Limits.Streams},
		{"message-rate", "PARLEY_MESSAGE_RATE", 20, "most messages one person may send in a minute", &cfg.Limits.MessagesPerMinute},
	}
	for _, n := range ints {
		if *n.dst, err = strconv.Atoi(env(n.env, strconv.Itoa(n.def))); err != nil || *n.dst < 1 {
			return fmt.Errorf("%s: %q is not a positive number", n.env, getenv(n.env))
		}
		fs.IntVar(n.dst, n.flag, *n.dst, n.usage+" ("+n.env+")")
	}
	return nil
}

// checkAuth refuses settings that would leave Parley open: a proxy mode that trusts no
// proxy, no sign-in on an address others can reach.
func checkAuth(cfg Config) error {
	switch cfg.Auth.Mode {
	case web.AuthLocal:
	case web.AuthProxy:
		if len(cfg.Auth.TrustedProxies) == 0 {
			return errors.New("--auth proxy needs --trusted-proxies (PARLEY_TRUSTED_PROXIES): the addresses of the proxy, whose user header is believed")
		}
	case web.AuthNone:
		if !web.LoopbackHost(cfg.Addr) {
			return fmt.Errorf("--auth none is for one person on this machine: listen on a loopback address such as 127.0.0.1:8080, not %q", cfg.Addr)
		}
	default:
		return fmt.Errorf("--auth %q: use local, proxy or none", cfg.Auth.Mode)
	}
	if cfg.Limits.Streams < 1 || cfg.Limits.MessagesPerMinute < 1 {
		return errors.New("--max-streams and --message-rate must be at least 1")
	}
	return nil
}

// parsePrefixes reads comma-separated IPs and CIDR ranges.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range splitList(s) {
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or a CIDR range", part)
		}
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
	}
	return out, nil
}

// splitList reads a comma-separated list, without empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
