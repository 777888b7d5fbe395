package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-chat/parley/web"
)

// TestPWA_WithoutSignIn: the browser fetches the service worker, the manifest and its icons
// on its own, signed in or not.
func TestPWA_WithoutSignIn(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{})
	anon := as.browser(t)

	code, body, h := anon.do(http.MethodGet, "/sw.js", nil, nil)
	if code != http.StatusOK || !strings.Contains(body, "showNotification") {
		t.Fatalf("GET /sw.js = %d %.80s", code, body)
	}
	if ct := h.Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
		t.Errorf("/sw.js Content-Type = %q", ct)
	}
	if cc := h.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("/sw.js Cache-Control = %q, want no-cache: a new worker must reach browsers", cc)
	}

	code, body, h = anon.do(http.MethodGet, "/static/manifest.webmanifest", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET the manifest = %d", code)
	}
	if ct := h.Get("Content-Type"); ct != "application/manifest+json" {
		t.Errorf("manifest Content-Type = %q", ct)
	}
	var m struct {
		Name     string `json:"name"`
		StartURL string `json:"start_url"`
		Scope    string `json:"scope"`
		Display  string `json:"display"`
		Icons    []struct{ Src, Sizes, Type, Purpose string }
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("the manifest is not JSON: %v", err)
	}
	if m.Name != "Parley" || m.StartURL != "/" || m.Scope != "/" || m.Display != "standalone" {
		t.Errorf("manifest = %+v", m)
	}
	maskable := false
	for _, icon := range m.Icons {
		code, _, h := anon.do(http.MethodGet, icon.Src, nil, nil)
		if code != http.StatusOK || h.Get("Content-Type") != "image/png" {
			t.Errorf("icon %s = %d %s", icon.Src, code, h.Get("Content-Type"))
		}
		maskable = maskable || icon.Purpose == "maskable"
	}
	if len(m.Icons) < 3 || !maskable {
		t.Errorf("icons = %+v, want 192 and 512 and a maskable one", m.Icons)
	}

	_, page := anon.get("/login")
	for _, want := range []string{`rel="manifest" href="/static/manifest.webmanifest?v=`, `rel="apple-touch-icon"`, `name="theme-color"`, `src="/static/push.js?v=`} {
		if !strings.Contains(page, want) {
			t.Errorf("the login page lacks %s", want)
		}
	}
}
