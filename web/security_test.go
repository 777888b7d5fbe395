package web_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/web"
)

// A browser that sends no Sec-Fetch-Site (before 2023) is judged by its Origin: a page of the
// same host under the other scheme is another site (http://host posting to https://host),
// refused like any other. The scheme Parley was reached by counts what a trusted TLS proxy
// says in X-Forwarded-Proto, and only what a trusted one says.
func TestCrossSchemePostsAreRefused(t *testing.T) {
	proxied := web.AuthOptions{Mode: web.AuthNone, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	servers := map[string]*testServer{}
	for name, auth := range map[string]web.AuthOptions{"direct": singlePerson, "behind a trusted proxy": proxied} {
		db := newDB(t)
		srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: auth, Runner: runnerFor(db, askerAgent(askerQuestion)), Heartbeat: time.Hour})
		servers[name] = newTestServerFrom(t, db, srv)
	}
	tests := []struct {
		name, server, path, origin, forwardedProto string
		wantStatus                                 int
	}{
		{"same scheme", "direct", "/conversations", "http", "", http.StatusSeeOther},
		{"an https page of the same host", "direct", "/conversations", "https", "", http.StatusForbidden},
		{"X-Forwarded-Proto from an untrusted address is not believed", "direct", "/conversations", "https", "https", http.StatusForbidden},
		{"behind a TLS proxy, its https page", "behind a trusted proxy", "/conversations", "https", "https", http.StatusSeeOther},
		{"behind a TLS proxy, an http page of the same host", "behind a trusted proxy", "/conversations", "http", "https", http.StatusForbidden},
		{"behind a proxy on plain http", "behind a trusted proxy", "/conversations", "http", "http", http.StatusSeeOther},
		// The API takes no cookie: past the check, it asks for a token.
		{"the API is exempt", "direct", "/api/v1/conversations", "https", "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := servers[tt.server]
			host := strings.TrimPrefix(ts.URL, "http://")
			form := url.Values{"agent": {"asker"}, "text": {"Plan"}}
			req, _ := http.NewRequest(http.MethodPost, ts.URL+tt.path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", tt.origin+"://"+host)
			if tt.forwardedProto != "" {
				req.Header.Set("X-Forwarded-Proto", tt.forwardedProto)
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("POST %s with Origin %s://%s = %d, want %d", tt.path, tt.origin, host, resp.StatusCode, tt.wantStatus)
			}
		})
	}
}
