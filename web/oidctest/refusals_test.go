package oidctest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

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
