package main

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-chat/parley/web/oidctest"
)

// Signing in through the provider outlives Parley's stops: a sign-in sent to the provider
// before a kill -9 comes back to the restarted Parley and signs the person in (what it
// needs was in the database, not in the process). And SIGTERM ends Parley within the
// grace while it keeps trying to reach a provider that is not there.
func TestServe_OIDCSignInThroughKill9AndSIGTERM(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	base := "http://" + addr
	idp, err := oidctest.Start(oidctest.Options{
		Users:   []oidctest.User{{Username: "olga", Password: "olga-pw", Groups: []string{"ops"}}},
		Clients: []oidctest.Client{{ID: "parley", Secret: "s3cret", RedirectURIs: []string{base + "/auth/oidc/callback"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer idp.Close()
	var srv *liveServer
	var logs *syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last server's log:\n%s", logs.String())
		}
	})
	start := func(issuer string) {
		t.Helper()
		logs = &syncBuffer{}
		cmd := mainCommand("serve", "--addr", addr, "--db", db, "--auth", "oidc", "--oidc-issuer", issuer, "--oidc-client-id", "parley")
		cmd.Env = append(cmd.Env, "PARLEY_OIDC_CLIENT_SECRET=s3cret")
		if _, err := startServe(cmd, logs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		srv = &liveServer{cmd: cmd, URL: base}
	}
	start(idp.Issuer)
	waitFor(t, "the provider's discovery document", func() bool { return strings.Contains(logs.String(), "identity provider ready") })

	// The browser signs in at the provider; its way back to Parley is held.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == "/auth/oidc/callback" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := browser.Get(base + "/auth/oidc/login?next=/settings")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="id" value="([^"]*)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no login form at %s", resp.Request.URL)
	}
	resp, err = browser.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/login", url.Values{"id": {string(m[1])}, "username": {"olga"}, "password": {"olga-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	callback := resp.Header.Get("Location")
	if !strings.HasPrefix(callback, base+"/auth/oidc/callback?") {
		t.Fatalf("the provider sends the browser to %q", callback)
	}

	srv.cmd.Process.Kill()
	srv.cmd.Wait()
	start(idp.Issuer)
	waitFor(t, "the provider's discovery document", func() bool { return strings.Contains(logs.String(), "identity provider ready") })
	browser.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err = browser.Get(callback)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings" {
		t.Fatalf("the callback after kill -9 = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, err = browser.Get(base + "/settings"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("olga's settings after signing in = %v, %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	// The provider gone, Parley keeps trying; SIGTERM ends it within the grace all the same.
	idp.Close()
	terminate(t, srv, logs)
	start(idp.Issuer)
	waitFor(t, "a failed try", func() bool { return strings.Contains(logs.String(), "identity provider cannot be reached") })
	if resp, err = browser.Get(base + "/auth/oidc/login"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("sign-in without the provider = %v, %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	terminate(t, srv, logs)
}
