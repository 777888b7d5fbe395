package oidctest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/parley-chat/parley/web/oidctest"
)

const (
	clientID     = "parley"
	clientSecret = "parley-secret"
)

// rp is a stand-in relying party: it only records what arrives at its callback.
type rp struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []url.Values
}

func newRP(t *testing.T) *rp {
	r := &rp{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got = append(r.got, req.URL.Query())
		r.mu.Unlock()
		io.WriteString(w, "ok: "+req.URL.Path)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *rp) callback() string  { return r.srv.URL + "/auth/callback" }
func (r *rp) loggedOut() string { return r.srv.URL + "/signed-out" }

type env struct {
	p        *oidctest.Provider
	rp       *rp
	provider *oidc.Provider
	cfg      oauth2.Config
	verifier *oidc.IDTokenVerifier
}

func setup(t *testing.T) *env {
	t.Helper()
	r := newRP(t)
	p, err := oidctest.Start(oidctest.Options{
		Users: []oidctest.User{
			{Username: "alice", Password: "alice-pw", Name: "Alice Example", Email: "alice@example.test", Groups: []string{"parley-users", "parley-admins"}},
			{Username: "bob", Password: "bob-pw", Name: "Bob Example", Email: "bob@example.test"},
		},
		Clients: []oidctest.Client{
			{ID: clientID, Secret: clientSecret, RedirectURIs: []string{r.callback()}, PostLogoutRedirectURIs: []string{r.loggedOut()}},
			{ID: "short", Secret: "short-secret", RedirectURIs: []string{r.callback()}, IDTokenLifetime: 2 * time.Second},
			{ID: "expired", Secret: "expired-secret", RedirectURIs: []string{r.callback()}, IDTokenLifetime: -time.Minute},
			{ID: "spa", RedirectURIs: []string{r.callback()}}, // public client: PKCE, no secret
		},
		ControlAPI: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if !strings.HasPrefix(p.Issuer, "http://127.0.0.1:") {
		t.Fatalf("issuer %q", p.Issuer)
	}
	provider, err := oidc.NewProvider(context.Background(), p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{p: p, rp: r, provider: provider}
	e.cfg = e.config(clientID, clientSecret)
	e.verifier = provider.Verifier(&oidc.Config{ClientID: clientID})
	return e
}

func (e *env) config(id, secret string) oauth2.Config {
	return oauth2.Config{
		ClientID:     id,
		ClientSecret: secret,
		Endpoint:     e.provider.Endpoint(),
		RedirectURL:  e.rp.callback(),
		Scopes:       []string{oidc.ScopeOpenID, "profile", "email", "groups"},
	}
}

func random(t *testing.T) string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// browser is an http.Client with a cookie jar that follows redirects, like a browser.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

var (
	formAction = regexp.MustCompile(`<form[^>]*action="([^"]*)"`)
	hiddenID   = regexp.MustCompile(`<input type="hidden" name="id" value="([^"]*)"`)
)

type authResult struct {
	code, state, nonce, verifier string
}

// signIn walks the authorization code flow as a browser would and returns the
// code that arrived at the relying party's redirect URI.
func (e *env) signIn(t *testing.T, cfg oauth2.Config, username, password string) authResult {
	t.Helper()
	res := authResult{state: random(t), nonce: random(t), verifier: oauth2.GenerateVerifier()}
	authURL := cfg.AuthCodeURL(res.state, oauth2.S256ChallengeOption(res.verifier), oidc.Nonce(res.nonce))

	b := browser(t)
	resp, err := b.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Request.URL.String(), e.p.Issuer+"/login?") {
		t.Fatalf("authorize: %d at %s: %s", resp.StatusCode, resp.Request.URL, page)
	}
	action, id := formAction.FindStringSubmatch(page), hiddenID.FindStringSubmatch(page)
	if action == nil || id == nil {
		t.Fatalf("no login form in %s", page)
	}
	target := resp.Request.URL.ResolveReference(&url.URL{Path: html.UnescapeString(action[1])})
	resp, err = b.PostForm(target.String(), url.Values{
		"id": {html.UnescapeString(id[1])}, "username": {username}, "password": {password},
	})
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	landed := resp.Request.URL
	if resp.StatusCode != 200 || !strings.HasPrefix(landed.String(), e.rp.callback()+"?") {
		t.Fatalf("after login: %d at %s: %s", resp.StatusCode, landed, body)
	}
	if got := landed.Query().Get("state"); got != res.state {
		t.Fatalf("state %q, want %q", got, res.state)
	}
	res.code = landed.Query().Get("code")
	if res.code == "" {
		t.Fatalf("no code in %s", landed)
	}
	return res
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (e *env) exchange(t *testing.T, cfg oauth2.Config, a authResult) (*oauth2.Token, string) {
	t.Helper()
	tok, err := cfg.Exchange(context.Background(), a.code, oauth2.VerifierOption(a.verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		t.Fatal("no id_token in token response")
	}
	return tok, raw
}

type claims struct {
	PreferredUsername string   `json:"preferred_username"`
	Name              string   `json:"name"`
	Email             string   `json:"email"`
	EmailVerified     bool     `json:"email_verified"`
	Groups            []string `json:"groups"`
}

func (e *env) loginAndVerify(t *testing.T, username, password string) (*oidc.IDToken, claims, string) {
	t.Helper()
	a := e.signIn(t, e.cfg, username, password)
	_, raw := e.exchange(t, e.cfg, a)
	idt, err := e.verifier.Verify(context.Background(), raw)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if idt.Nonce != a.nonce {
		t.Fatalf("nonce %q, want %q", idt.Nonce, a.nonce)
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		t.Fatal(err)
	}
	return idt, c, raw
}

func kid(t *testing.T, raw string) string {
	t.Helper()
	h, err := base64URLDecode(strings.Split(raw, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var hdr struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(h, &hdr); err != nil {
		t.Fatal(err)
	}
	return hdr.Kid
}

func TestDiscovery(t *testing.T) {
	e := setup(t)
	var d struct {
		EndSession    string   `json:"end_session_endpoint"`
		PKCE          []string `json:"code_challenge_methods_supported"`
		Scopes        []string `json:"scopes_supported"`
		ClaimsSupport []string `json:"claims_supported"`
	}
	if err := e.provider.Claims(&d); err != nil {
		t.Fatal(err)
	}
	if d.EndSession != e.p.Issuer+"/end_session" {
		t.Errorf("end_session_endpoint %q", d.EndSession)
	}
	if !slices.Contains(d.PKCE, "S256") {
		t.Errorf("code_challenge_methods_supported %v", d.PKCE)
	}
	if !slices.Contains(d.Scopes, "groups") || !slices.Contains(d.ClaimsSupport, "groups") {
		t.Errorf("scopes %v claims %v", d.Scopes, d.ClaimsSupport)
	}
}

func TestCodeFlowClaimsAndUserinfo(t *testing.T) {
	e := setup(t)
	a := e.signIn(t, e.cfg, "alice", "alice-pw")
	tok, raw := e.exchange(t, e.cfg, a)
	idt, err := e.verifier.Verify(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		t.Fatal(err)
	}
	if idt.Subject != "alice" || idt.Nonce != a.nonce || c.PreferredUsername != "alice" ||
		c.Name != "Alice Example" || c.Email != "alice@example.test" || !c.EmailVerified ||
		!slices.Equal(c.Groups, []string{"parley-users", "parley-admins"}) {
		t.Fatalf("id token: sub=%q nonce=%q claims=%+v", idt.Subject, idt.Nonce, c)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		t.Errorf("at_hash: %v", err)
	}
	ui, err := e.provider.UserInfo(context.Background(), oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatal(err)
	}
	var uc claims
	if err := ui.Claims(&uc); err != nil {
		t.Fatal(err)
	}
	if ui.Subject != "alice" || !slices.Equal(uc.Groups, c.Groups) || uc.Email != c.Email {
		t.Fatalf("userinfo %+v %+v", ui, uc)
	}

	// a user without groups gets an empty array, not a missing claim
	_, bc, raw := e.loginAndVerify(t, "bob", "bob-pw")
	if bc.Groups == nil || len(bc.Groups) != 0 || !strings.Contains(payload(t, raw), `"groups":[]`) {
		t.Fatalf("bob groups %#v in %s", bc.Groups, payload(t, raw))
	}
}

func TestWrongPasswordShowsForm(t *testing.T) {
	e := setup(t)
	b := browser(t)
	resp, err := b.Get(e.cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if err != nil {
		t.Fatal(err)
	}
	page := readBody(t, resp)
	id := hiddenID.FindStringSubmatch(page)[1]
	resp, err = b.PostForm(e.p.Issuer+"/login", url.Values{"id": {id}, "username": {"alice"}, "password": {"nope"}})
	if err != nil {
		t.Fatal(err)
	}
	page = readBody(t, resp)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(page, "wrong username or password") ||
		resp.Request.URL.Path != "/login" {
		t.Fatalf("%d at %s: %s", resp.StatusCode, resp.Request.URL, page)
	}
}

func TestPKCEWrongVerifierRefused(t *testing.T) {
	e := setup(t)
	a := e.signIn(t, e.cfg, "alice", "alice-pw")
	_, err := e.cfg.Exchange(context.Background(), a.code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("want invalid_grant, got %v", err)
	}
}

func TestPublicClientPKCE(t *testing.T) {
	e := setup(t)
	cfg := e.config("spa", "")
	a := e.signIn(t, cfg, "alice", "alice-pw")
	_, raw := e.exchange(t, cfg, a)
	if _, err := e.provider.Verifier(&oidc.Config{ClientID: "spa"}).Verify(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
}

func TestGroupsChangeAtRuntime(t *testing.T) {
	e := setup(t)
	if err := e.p.SetUserGroups("alice", []string{"readers"}); err != nil {
		t.Fatal(err)
	}
	_, c, _ := e.loginAndVerify(t, "alice", "alice-pw")
	if !slices.Equal(c.Groups, []string{"readers"}) {
		t.Fatalf("groups %v", c.Groups)
	}
	if err := e.p.SetUserGroups("nobody", nil); err == nil {
		t.Fatal("want error for unknown user")
	}
}
