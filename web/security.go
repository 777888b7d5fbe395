package web

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
)

// contentSecurityPolicy lets pages load only Parley's own scripts, styles and images.
// Datastar evaluates its data-* expressions with Function(), hence 'unsafe-eval'; inline
// style attributes (data-show's initial display: none) need 'unsafe-inline' for styles.
// No inline script runs, no other site frames a page, forms post only here.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secureHeaders sets the security headers of every response (a route may tighten the
// policy, as documents do). Signed in through an identity provider, signing out posts to
// Parley and is sent on to the provider's end_session_endpoint: forms may go there too.
func (s *Server) secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		csp := contentSecurityPolicy
		if s.oidc != nil {
			if p := s.oidc.csp.Load(); p != nil {
				csp = *p
			}
		}
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		return next(c)
	}
}

// crossOriginProtection refuses state-changing requests another site's page makes
// (Sec-Fetch-Site, or Origin against the host and scheme Parley was reached by): every POST,
// Datastar's included. Requests without either header come from programs, not browsers, and
// pass (A2A clients). The JSON API is exempt: it takes only a bearer token, never a cookie,
// so another site's page has nothing of the person's to send with it.
func (s *Server) crossOriginProtection(h http.Handler) http.Handler {
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte("Refused: this request came from another site. Use Parley from its own pages.\n"))
	})
	cop := http.NewCrossOriginProtection()
	cop.AddInsecureBypassPattern(apiPrefix + "/")
	// The API's routes a page calls with its session check it themselves (requireTokenOrPage).
	s.pageOrigin = http.NewCrossOriginProtection()
	cop.SetDenyHandler(refuse)
	checked := cop.Handler(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.otherScheme(r) && !isAPI(r) {
			refuse.ServeHTTP(w, r)
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// otherScheme reports a state-changing request without Sec-Fetch-Site (a browser from
// before 2023) whose Origin names Parley's host under the other scheme: an http:// page
// posting to https://, or the reverse, is another site. Go's check compares Origin with Host
// alone, which has no scheme. Parley's own scheme is https when it or a trusted proxy
// terminated TLS (isHTTPS).
func (s *Server) otherScheme(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	origin := r.Header.Get("Origin")
	if r.Header.Get("Sec-Fetch-Site") != "" || origin == "" {
		return false
	}
	o, err := url.Parse(origin)
	if err != nil || o.Host != r.Host {
		return false // another host: Go's check refuses it
	}
	scheme := "http"
	if s.isHTTPS(r) {
		scheme = "https"
	}
	return o.Scheme != scheme
}

// ownOrigin reports whether a request's Origin header names Parley itself, as the request
// reached it: the same host and scheme.
func (s *Server) ownOrigin(r *http.Request) bool {
	o, err := url.Parse(r.Header.Get("Origin"))
	return err == nil && o.Host == r.Host && o.Scheme+"://"+o.Host == s.baseURL(r)
}

// baseURL is Parley's address as the request reached it: "https://host" when it or a
// trusted proxy terminated TLS.
func (s *Server) baseURL(r *http.Request) string {
	if s.isHTTPS(r) {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}
