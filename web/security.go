package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// contentSecurityPolicy lets pages load only Parley's own scripts, styles and images.
// Datastar evaluates its data-* expressions with Function(), hence 'unsafe-eval'; inline
// style attributes (data-show's initial display: none) need 'unsafe-inline' for styles.
// No inline script runs, no other site frames a page, forms post only here.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secureHeaders sets the security headers of every response (a route may tighten the
// policy, as documents do).
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		return next(c)
	}
}

// crossOriginProtection refuses state-changing requests another site's page makes
// (Sec-Fetch-Site, or Origin against Host): every POST, Datastar's included. Requests
// without either header come from programs, not browsers, and pass (A2A clients). The
// JSON API is exempt: it takes only a bearer token, never a cookie, so another site's page
// has nothing of the person's to send with it.
func crossOriginProtection(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.AddInsecureBypassPattern(apiPrefix + "/")
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte("Refused: this request came from another site. Use Parley from its own pages.\n"))
	}))
	return cop.Handler(h)
}
