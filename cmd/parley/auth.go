package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// authFlags declares the flags of signing in and of the per-person limits, each with its
// environment twin as the default.
func authFlags(fs *flag.FlagSet, cfg *Config, getenv func(string) string) error {
	env := func(name, def string) string { return envOr(getenv, name, def) }
	fs.StringVar(&cfg.Auth.Mode, "auth", env("PARLEY_AUTH", web.AuthLocal), "how people sign in: local, oidc, proxy or none (PARLEY_AUTH)")
	oidcFlags(fs, cfg, getenv)
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
	cfg.Auth.ProxyHeaders = domain.SplitList(getenv("PARLEY_PROXY_HEADER"))
	fs.Func("proxy-header", "with --auth proxy, the header naming the person (default Remote-User; X-Forwarded-User for oauth2-proxy); several, comma-separated, must agree (PARLEY_PROXY_HEADER)", func(s string) error {
		cfg.Auth.ProxyHeaders = domain.SplitList(s)
		return nil
	})
	fs.StringVar(&cfg.Auth.ProxyGroupsHeader, "proxy-groups-header", getenv("PARLEY_PROXY_GROUPS_HEADER"),
		"with --auth proxy, the header holding the person's groups, synced as Parley groups (Remote-Groups for Authelia, X-Forwarded-Groups for oauth2-proxy) (PARLEY_PROXY_GROUPS_HEADER)")
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
	case web.AuthOIDC:
		if err := checkOIDC(cfg); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--auth %q: use local, oidc, proxy or none", cfg.Auth.Mode)
	}
	if cfg.Auth.ProxyGroupsHeader != "" && cfg.Auth.Mode != web.AuthProxy {
		return errors.New("--proxy-groups-header goes with --auth proxy")
	}
	if cfg.Limits.Streams < 1 || cfg.Limits.MessagesPerMinute < 1 {
		return errors.New("--max-streams and --message-rate must be at least 1")
	}
	return nil
}

// parsePrefixes reads comma-separated IPs and CIDR ranges.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range domain.SplitList(s) {
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

// oidcFlags declares the settings of signing in through an OpenID Connect provider.
func oidcFlags(fs *flag.FlagSet, cfg *Config, getenv func(string) string) {
	o := &cfg.Auth.OIDC
	fs.StringVar(&o.Issuer, "oidc-issuer", getenv("PARLEY_OIDC_ISSUER"), "with --auth oidc, the provider's issuer URL, e.g. https://id.example/realms/acme (PARLEY_OIDC_ISSUER)")
	fs.StringVar(&o.ClientID, "oidc-client-id", getenv("PARLEY_OIDC_CLIENT_ID"), "with --auth oidc, Parley's client id at the provider (PARLEY_OIDC_CLIENT_ID); its secret is PARLEY_OIDC_CLIENT_SECRET")
	o.ClientSecret = getenv("PARLEY_OIDC_CLIENT_SECRET")
	if v := getenv("PARLEY_OIDC_SCOPES"); v != "" {
		o.Scopes = strings.Fields(strings.ReplaceAll(v, ",", " "))
	}
	fs.Func("oidc-scopes", "with --auth oidc, the scopes asked for, space- or comma-separated (PARLEY_OIDC_SCOPES, default \"openid profile email groups\")", func(s string) error {
		o.Scopes = strings.Fields(strings.ReplaceAll(s, ",", " "))
		return nil
	})
	fs.StringVar(&o.NameClaim, "oidc-name-claim", getenv("PARLEY_OIDC_NAME_CLAIM"), "with --auth oidc, the claim that names the account on its first sign-in (PARLEY_OIDC_NAME_CLAIM, default preferred_username)")
	fs.StringVar(&o.GroupsClaim, "oidc-groups-claim", getenv("PARLEY_OIDC_GROUPS_CLAIM"), "with --auth oidc, the claim holding the person's groups, synced as Parley groups at each sign-in (PARLEY_OIDC_GROUPS_CLAIM, default groups)")
	fs.StringVar(&o.StaffGroup, "oidc-staff-group", getenv("PARLEY_OIDC_STAFF_GROUP"), "with --auth oidc, the provider's group whose members are staff, checked at each sign-in; unset, staff is set with parley user set-role (PARLEY_OIDC_STAFF_GROUP)")
	fs.StringVar(&o.ProviderName, "oidc-provider-name", getenv("PARLEY_OIDC_PROVIDER_NAME"), "with --auth oidc, the provider's name on the sign-in button, e.g. Okta (PARLEY_OIDC_PROVIDER_NAME; default the issuer's host)")
}

// checkOIDC refuses OpenID Connect settings that cannot work or would not be safe: no
// issuer or client, an issuer over plain http beyond this machine, no address people reach
// Parley at (the redirect URI is built from it).
func checkOIDC(cfg Config) error {
	o := cfg.Auth.OIDC
	switch {
	case o.Issuer == "":
		return errors.New("--auth oidc needs --oidc-issuer (PARLEY_OIDC_ISSUER): the provider's issuer URL")
	case o.ClientID == "":
		return errors.New("--auth oidc needs --oidc-client-id (PARLEY_OIDC_CLIENT_ID): Parley's client at the provider")
	case len(o.Scopes) > 0 && !slices.Contains(o.Scopes, "openid"):
		return fmt.Errorf("--oidc-scopes %q must include openid", strings.Join(o.Scopes, " "))
	}
	u, err := url.Parse(o.Issuer)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return fmt.Errorf("--oidc-issuer %q is not an https:// URL", o.Issuer)
	case u.Scheme == "http" && !web.LoopbackHost(u.Host):
		return fmt.Errorf("--oidc-issuer %q: an http:// issuer only on a loopback address (tests); use https://", o.Issuer)
	}
	if o.StaffGroup != "" {
		if _, refused := domain.ProviderGroups([]string{o.StaffGroup}); len(refused) > 0 {
			_, err := domain.GroupName(o.StaffGroup)
			return fmt.Errorf("--oidc-staff-group %q is not a group Parley can take (nobody would be staff): %s", o.StaffGroup, domain.ErrorMessage(err))
		}
	}
	if cfg.PublicURL == "" && !web.LoopbackHost(cfg.Addr) {
		return errors.New("--auth oidc needs --public-url (PARLEY_PUBLIC_URL), Parley's address as people reach it: the provider sends them back to <public-url>/auth/oidc/callback")
	}
	return nil
}
