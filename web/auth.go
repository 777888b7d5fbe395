package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

// The ways people are told apart (AuthOptions.Mode).
const (
	// AuthLocal: accounts with passwords, server-side sessions, sign-up (the default).
	AuthLocal = "local"
	// AuthProxy: a trusted reverse proxy (oauth2-proxy, Authelia) names the person in a header.
	AuthProxy = "proxy"
	// AuthNone: one person, no sign-in; only for a server on a loopback address.
	AuthNone = "none"
	// AuthOIDC: the organization's OpenID Connect provider signs people in; server-side
	// sessions, as AuthLocal's.
	AuthOIDC = "oidc"
)

// NoneUser is the account of the single person of AuthNone.
const NoneUser = "local"

// AuthOptions configures how people sign in and what staff may do.
type AuthOptions struct {
	// Mode is AuthLocal (when empty), AuthProxy, AuthNone or AuthOIDC.
	Mode string
	// Signup lets people make their own accounts (AuthLocal). The first account can always
	// be made, and becomes staff.
	Signup bool
	// Session bounds a session: 30 min idle and 12 h in all by default.
	Session store.SessionLimits
	// TrustedProxies are the addresses AuthProxy accepts requests from, and whose
	// X-Forwarded-Proto and X-Forwarded-For are believed in any mode. ProxyHeaders are the
	// headers naming the person (Remote-User by default; X-Forwarded-User for
	// oauth2-proxy): when several are named, all those present must agree, so that a header
	// a client sent and the proxy passed on cannot stand in for the one the proxy set.
	TrustedProxies []netip.Prefix
	ProxyHeaders   []string
	// ProxyGroupsHeader, with AuthProxy, names the header holding the person's groups
	// (Remote-Groups for Authelia, X-Forwarded-Groups for oauth2-proxy): comma-separated,
	// or one line each; they are synced as an identity provider's are. Empty: not read.
	ProxyGroupsHeader string
	// OIDC is the identity provider of AuthOIDC.
	OIDC OIDCOptions
	// StaffAnswer lets staff answer, decline or cancel a question on its person's behalf,
	// an action recorded in the audit log. Off by default: staff read.
	StaffAnswer bool
}

// sessions reports whether people sign in to sessions of Parley's own (a cookie): with a
// password, or through the identity provider.
func (o AuthOptions) sessions() bool { return o.Mode == AuthLocal || o.Mode == AuthOIDC }

func (o AuthOptions) withDefaults() AuthOptions {
	if o.Mode == "" {
		o.Mode = AuthLocal
	}
	if o.Session.Idle <= 0 {
		o.Session.Idle = 30 * time.Minute
	}
	if o.Session.Max <= 0 {
		o.Session.Max = 12 * time.Hour
	}
	if len(o.ProxyHeaders) == 0 {
		o.ProxyHeaders = []string{"Remote-User"}
	}
	return o
}

// cookiePair names one of Parley's cookies twice: with the __Host- prefix over HTTPS (so no
// subdomain or plain-HTTP page can set it), a plain name on http://localhost, where browsers
// refuse Secure cookies.
type cookiePair struct{ secure, plain string }

var (
	// sessionCookie holds the browser's session id.
	sessionCookie = cookiePair{"__Host-parley_session", "parley_session"}
	// signInCookie ties a sign-in sent to the provider to the browser that started it: the
	// callback must come back to it (no one can sign another browser in with their own code).
	signInCookie = cookiePair{"__Host-parley_signin", "parley_signin"}
)

// name is the cookie's name for the request: the __Host- one over HTTPS.
func (p cookiePair) name(s *Server, r *http.Request) (string, bool) {
	if s.isHTTPS(r) {
		return p.secure, true
	}
	return p.plain, false
}

// read reads the cookie: over HTTPS only the __Host- one, which no other site or plain-HTTP
// page can have set.
func (p cookiePair) read(s *Server, r *http.Request) string {
	name, _ := p.name(s, r)
	if ck, err := r.Cookie(name); err == nil {
		return ck.Value
	}
	return ""
}

// set hands the browser the cookie for maxAge.
func (p cookiePair) set(s *Server, c echo.Context, value string, maxAge time.Duration) {
	name, secure := p.name(s, c.Request())
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode, MaxAge: int(maxAge / time.Second)})
}

// clear clears the cookie under both its names.
func (p cookiePair) clear(c echo.Context) {
	for _, name := range []string{p.secure, p.plain} {
		c.SetCookie(&http.Cookie{Name: name, Path: "/", HttpOnly: true, Secure: name == p.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1})
	}
}

// isHTTPS reports whether the browser reached Parley over HTTPS, directly or through a
// trusted proxy that terminates TLS.
func (s *Server) isHTTPS(r *http.Request) bool {
	return r.TLS != nil || (s.fromTrustedProxy(r) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"))
}

// sessionToken reads the session cookie.
func (s *Server) sessionToken(r *http.Request) string { return sessionCookie.read(s, r) }

// setSessionCookie hands the browser its session id; an empty token clears both cookies.
func (s *Server) setSessionCookie(c echo.Context, token string) {
	if token == "" {
		sessionCookie.clear(c)
		return
	}
	sessionCookie.set(s, c, token, s.auth.Session.Max)
}

// userKey is where the signed-in user is kept on the echo context.
const userKey = "parley.user"

// currentUser is the signed-in user of a request that passed requireUser.
func currentUser(c echo.Context) domain.User {
	u, _ := c.Get(userKey).(domain.User)
	return u
}

// identify finds who sent the request, by the configured mode. It returns EUNAUTHORIZED
// when nobody is signed in and EFORBIDDEN for a request that must not come in at all (a
// proxy header from an untrusted address).
func (s *Server) identify(r *http.Request) (domain.User, error) {
	ctx := r.Context()
	switch s.auth.Mode {
	case AuthNone:
		// Loopback alone does not keep other sites out: a page whose name was made to point
		// at 127.0.0.1 (DNS rebinding) sends its own name as the Host.
		if !LoopbackHost(r.Host) {
			return domain.User{}, domain.Errorf(domain.EFORBIDDEN, "Parley without sign-in answers only to localhost.")
		}
		return s.accounts.EnsureUser(ctx, NoneUser, domain.RoleStaff)
	case AuthProxy:
		if !s.fromTrustedProxy(r) {
			return domain.User{}, domain.Errorf(domain.EFORBIDDEN, "Parley accepts requests only through its sign-in proxy.")
		}
		name := ""
		for _, h := range s.auth.ProxyHeaders {
			v := strings.TrimSpace(r.Header.Get(h))
			if v == "" {
				continue
			}
			if name != "" && v != name {
				return domain.User{}, domain.Errorf(domain.EFORBIDDEN, "The sign-in headers name different people.")
			}
			name = v
		}
		if name == "" {
			return domain.User{}, domain.Errorf(domain.EUNAUTHORIZED, "The sign-in proxy did not say who you are.")
		}
		u, err := s.accounts.EnsureUser(ctx, name, "")
		if err == nil && u.Role == domain.RoleService {
			return domain.User{}, domain.Errorf(domain.EFORBIDDEN, "%q is one of Parley's own accounts; nobody signs in as it.", name)
		}
		if err == nil && s.auth.ProxyGroupsHeader != "" && !store.Peeking(ctx) {
			err = s.syncProxyGroups(ctx, u, r.Header.Values(s.auth.ProxyGroupsHeader))
		}
		return u, err
	}
	return s.accounts.Session(ctx, s.sessionToken(r), s.auth.Session)
}

// identifyUntil is identify, and when the person's session ends unless they do something
// first (zero when sign-in has no sessions), from one read of the session.
func (s *Server) identifyUntil(r *http.Request) (domain.User, time.Time, error) {
	if !s.auth.sessions() {
		u, err := s.identify(r)
		return u, time.Time{}, err
	}
	return s.accounts.SessionUntil(r.Context(), s.sessionToken(r), s.auth.Session)
}

// LoopbackHost reports whether a host (a request's Host, a listen address, a peer) names
// this machine: localhost or a loopback address, with or without a port.
func LoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// peerHost is the address of the request's peer, without its port.
func peerHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// fromTrustedProxy reports whether the request's peer is one of the trusted proxies.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	addr, err := netip.ParseAddr(peerHost(r))
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range s.auth.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// requireUser lets signed-in people through, with the user on the context. Others are sent
// to sign in: pages by redirect, everything else with 401.
func (s *Server) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, err := s.identify(c.Request())
		if err != nil {
			if domain.ErrorCode(err) != domain.EUNAUTHORIZED || !s.auth.sessions() {
				return err
			}
			r := c.Request()
			if r.Method == http.MethodGet && r.Header.Get("Datastar-Request") == "" {
				return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(r.URL.RequestURI()))
			}
			return err
		}
		c.Set(userKey, u)
		return next(c)
	}
}

// requireStaff lets staff through; anyone else gets 404, as for a page that is not there.
func requireStaff(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !currentUser(c).IsStaff() {
			return domain.ErrNotFound
		}
		return next(c)
	}
}

// safeNext is where to go after signing in: a path on this site, "/" otherwise. Browsers
// drop tabs and newlines and read \\ as /, so a next holding any of them is refused.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	return next
}

// authDescription says how people sign in, for the start-up log.
func (o AuthOptions) authDescription() string {
	switch o.Mode {
	case AuthProxy:
		return fmt.Sprintf("proxy (%s from %d trusted address ranges)", strings.Join(o.ProxyHeaders, " = "), len(o.TrustedProxies))
	case AuthNone:
		return "none (one person, no sign-in)"
	case AuthOIDC:
		staff := "parley user set-role"
		if o.OIDC.StaffGroup != "" {
			staff = "the group " + o.OIDC.StaffGroup
		}
		return fmt.Sprintf("oidc (%s as %s, staff from %s, sessions %s idle, %s at most)", o.OIDC.Issuer, o.OIDC.ClientID, staff, o.Session.Idle, o.Session.Max)
	}
	return fmt.Sprintf("local (sign-up %v, sessions %s idle, %s at most)", o.Signup, o.Session.Idle, o.Session.Max)
}

// syncProxyGroups makes the person's groups from the proxy those its groups header names
// (comma-separated, or a line each: oauth2-proxy sends one per group), when the header is
// not what they last came with on this server: the way an identity provider's are synced.
func (s *Server) syncProxyGroups(ctx context.Context, u domain.User, lines []string) error {
	var raw []string
	for _, l := range lines {
		raw = append(raw, domain.SplitList(l)...)
	}
	key := strings.Join(raw, ",")
	if last, ok := s.proxyGroups.Load(u.ID); ok && last == key {
		return nil
	}
	groups, refused := domain.ProviderGroups(raw)
	if len(refused) > 0 {
		s.log.Warn("sign-in proxy: groups whose names Parley cannot take are left out", "user", u.Name, "groups", strings.Join(refused, ", "))
	}
	if groups == nil {
		groups = []string{}
	}
	joined, left, err := s.ids.SyncGroups(ctx, u.ID, domain.SourceProxy, groups, "proxy")
	if err != nil {
		return err
	}
	s.proxyGroups.Store(u.ID, key)
	if len(joined) > 0 || len(left) > 0 {
		s.log.Info("groups from the sign-in proxy", "user", u.Name, "joined", strings.Join(joined, ","), "left", strings.Join(left, ","))
		s.live.changed()
	}
	return nil
}
