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

func TestKeyRotation(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	_, _, raw1 := e.loginAndVerify(t, "alice", "alice-pw") // verifier caches key 1
	kid1 := kid(t, raw1)

	// rotate, dropping the old key: go-oidc refetches the JWKS on an unknown kid
	kid2, err := e.p.RotateKey(false)
	if err != nil {
		t.Fatal(err)
	}
	_, _, raw2 := e.loginAndVerify(t, "alice", "alice-pw")
	if kid(t, raw2) != kid2 || kid2 == kid1 {
		t.Fatalf("kids %s %s %s", kid1, kid2, kid(t, raw2))
	}
	if _, err := e.verifier.Verify(ctx, raw1); err == nil {
		t.Fatal("token signed with a removed key still verifies")
	}

	// rotate, keeping the old key: tokens signed with it still verify
	kid3, err := e.p.RotateKey(true)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.p.KeyIDs(); !slices.Equal(got, []string{kid2, kid3}) {
		t.Fatalf("KeyIDs %v", got)
	}
	_, _, raw3 := e.loginAndVerify(t, "alice", "alice-pw")
	if kid(t, raw3) != kid3 {
		t.Fatal("not signed with the new key")
	}
	if _, err := e.verifier.Verify(ctx, raw2); err != nil {
		t.Fatalf("old kept key: %v", err)
	}
}

func TestExpiredAndShortLivedTokens(t *testing.T) {
	e := setup(t)
	ctx := context.Background()

	// a client registered with a negative lifetime gets already-expired tokens
	cfg := e.config("expired", "expired-secret")
	_, raw := e.exchange(t, cfg, e.signIn(t, cfg, "alice", "alice-pw"))
	_, err := e.provider.Verifier(&oidc.Config{ClientID: "expired"}).Verify(ctx, raw)
	var exp *oidc.TokenExpiredError
	if !errors.As(err, &exp) {
		t.Fatalf("want TokenExpiredError, got %v", err)
	}

	// a 2s token: valid now, expired 3s later (a fake clock instead of sleeping)
	cfg = e.config("short", "short-secret")
	_, raw = e.exchange(t, cfg, e.signIn(t, cfg, "alice", "alice-pw"))
	if _, err := e.provider.Verifier(&oidc.Config{ClientID: "short"}).Verify(ctx, raw); err != nil {
		t.Fatal(err)
	}
	later := e.provider.Verifier(&oidc.Config{ClientID: "short", Now: func() time.Time { return time.Now().Add(3 * time.Second) }})
	if _, err := later.Verify(ctx, raw); !errors.As(err, &exp) {
		t.Fatalf("want TokenExpiredError, got %v", err)
	}

	// and the lifetime can be changed at runtime
	if err := e.p.SetIDTokenLifetime(clientID, -time.Second); err != nil {
		t.Fatal(err)
	}
	_, raw = e.exchange(t, e.cfg, e.signIn(t, e.cfg, "alice", "alice-pw"))
	if _, err := e.verifier.Verify(ctx, raw); !errors.As(err, &exp) {
		t.Fatalf("want TokenExpiredError, got %v", err)
	}
}

func TestWrongAudienceRefused(t *testing.T) {
	e := setup(t)
	e.p.IssueWrongAudienceOnce("someone-else")
	_, raw := e.exchange(t, e.cfg, e.signIn(t, e.cfg, "alice", "alice-pw"))
	_, err := e.verifier.Verify(context.Background(), raw)
	if err == nil || !strings.Contains(err.Error(), "expected audience") {
		t.Fatalf("want audience error, got %v (payload %s)", err, payload(t, raw))
	}
	// one-shot: the next token is fine again
	e.loginAndVerify(t, "alice", "alice-pw")
}

func TestCodeReplayRefused(t *testing.T) {
	e := setup(t)
	a := e.signIn(t, e.cfg, "alice", "alice-pw")
	e.exchange(t, e.cfg, a)
	_, err := e.cfg.Exchange(context.Background(), a.code, oauth2.VerifierOption(a.verifier))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("want invalid_grant, got %v", err)
	}
}

func TestEndSession(t *testing.T) {
	e := setup(t)
	_, _, raw := e.loginAndVerify(t, "alice", "alice-pw")
	var d struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := e.provider.Claims(&d); err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	logout := func(postLogout string) *http.Response {
		u := d.EndSession + "?" + url.Values{
			"id_token_hint":            {raw},
			"post_logout_redirect_uri": {postLogout},
			"state":                    {"st8"},
		}.Encode()
		resp, err := noFollow.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := logout(e.rp.loggedOut())
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != e.rp.loggedOut()+"?state=st8" {
		t.Fatalf("end_session: %d Location=%q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := e.p.LogoutCount("alice"); n != 1 {
		t.Fatalf("LogoutCount %d", n)
	}
	// following it like a browser lands on the relying party
	b := browser(t)
	resp2, err := b.Get(d.EndSession + "?" + url.Values{"id_token_hint": {raw}, "post_logout_redirect_uri": {e.rp.loggedOut()}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp2)
	if resp2.StatusCode != 200 || resp2.Request.URL.String() != e.rp.loggedOut() {
		t.Fatalf("landed on %s (%d)", resp2.Request.URL, resp2.StatusCode)
	}
	// an unregistered post_logout_redirect_uri is refused
	if resp := logout("http://127.0.0.1:1/evil"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unregistered post_logout_redirect_uri: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestControlAPI(t *testing.T) {
	e := setup(t)
	post := func(path string, form url.Values) map[string]any {
		resp, err := http.PostForm(e.p.Issuer+path, form)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, m)
		}
		return m
	}
	post("/oidctest/groups", url.Values{"username": {"bob"}, "group": {"g1", "g2"}})
	m := post("/oidctest/rotate-key", url.Values{"keep_old": {"false"}})
	_, c, raw := e.loginAndVerify(t, "bob", "bob-pw")
	if !slices.Equal(c.Groups, []string{"g1", "g2"}) || kid(t, raw) != m["kid"] {
		t.Fatalf("groups %v kid %s vs %v", c.Groups, kid(t, raw), m["kid"])
	}
	post("/oidctest/wrong-audience", nil)
	_, raw = e.exchange(t, e.cfg, e.signIn(t, e.cfg, "bob", "bob-pw"))
	if _, err := e.verifier.Verify(context.Background(), raw); err == nil {
		t.Fatal("wrong audience accepted")
	}
	post("/oidctest/id-token-lifetime", url.Values{"client_id": {clientID}, "lifetime": {"-1m"}})
	_, raw = e.exchange(t, e.cfg, e.signIn(t, e.cfg, "bob", "bob-pw"))
	var exp *oidc.TokenExpiredError
	if _, err := e.verifier.Verify(context.Background(), raw); !errors.As(err, &exp) {
		t.Fatalf("want expired, got %v", err)
	}
}

func payload(t *testing.T, raw string) string {
	b, err := base64URLDecode(strings.Split(raw, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTamperNextIDToken(t *testing.T) {
	e := setup(t)
	e.p.TamperNextIDToken(func(c map[string]any) { c["iss"] = "http://127.0.0.1:1" })
	_, raw := e.exchange(t, e.cfg, e.signIn(t, e.cfg, "alice", "alice-pw"))
	if _, err := e.verifier.Verify(context.Background(), raw); err == nil || !strings.Contains(err.Error(), "different provider") {
		t.Fatalf("want issuer error, got %v", err)
	}
	// a failed exchange does not use up the tamper function
	e.p.TamperNextIDToken(func(c map[string]any) { delete(c, "groups") })
	if _, err := e.cfg.Exchange(context.Background(), "bogus-code"); err == nil {
		t.Fatal("bogus code accepted")
	}
	_, c, _ := e.loginAndVerify(t, "alice", "alice-pw")
	if c.Groups != nil {
		t.Fatalf("groups still there: %v", c.Groups)
	}
}
