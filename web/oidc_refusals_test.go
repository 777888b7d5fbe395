package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/oidctest"
)

func TestOIDC_Refusals(t *testing.T) {
	op := newOIDCParley(t, "127.0.0.1:0", true)
	waitFor(t, "the provider's discovery document", func() bool {
		code, _, _ := op.browser(t).get("/auth/oidc/login")
		return code == http.StatusOK
	})
	// refused checks a sign-in ended on Parley's page with 400 saying why, nobody signed in,
	// no account made, and the log saying what was refused.
	refused := func(t *testing.T, b *oidcBrowser, code int, body string, at *url.URL, want, logged string, accounts int) {
		t.Helper()
		if code != http.StatusBadRequest || at.Path != "/auth/oidc/callback" || !strings.Contains(body, want) {
			t.Errorf("refusal = %d at %s, want 400 saying %q: %s", code, at, want, body)
		}
		if b.signedIn() {
			t.Error("signed in anyway")
		}
		if n := op.accounts(t); n != accounts {
			t.Errorf("%d accounts, want the %d there before", n, accounts)
		}
		if !strings.Contains(op.log.String(), logged) {
			t.Errorf("the log does not say %q", logged)
		}
	}

	t.Run("AStateParleyDidNotIssue", func(t *testing.T) {
		b := op.browser(t)
		code, body, at := b.get("/auth/oidc/callback?state=made-up&code=whatever")
		refused(t, b, code, body, at, "not started here", "state: Parley did not start this sign-in", 0)
	})
	t.Run("TheCallbackReplayed", func(t *testing.T) {
		// A real sign-in whose last step is held back: the callback is made twice.
		b := op.browser(t)
		callback := b.held(b.authURL(), "mallory", "mallory-pw")
		if code, _, at := b.get(callback.String()); code != http.StatusOK || at.Path != "/" {
			t.Fatalf("the sign-in = %d at %s", code, at)
		}
		// Signed out again, the same callback is refused: its state was used.
		b.post("/logout", url.Values{})
		code, body, at := b.get(callback.String())
		if code != http.StatusBadRequest || !strings.Contains(body, "used already") || b.signedIn() {
			t.Errorf("a replayed callback = %d at %s, signed in %v", code, at, b.signedIn())
		}
	})
	t.Run("AReplayedCode", func(t *testing.T) {
		// mallory's code, used once, comes back with a new sign-in of her own browser's.
		b := op.browser(t)
		first := b.held(b.authURL(), "mallory", "mallory-pw")
		b.get(first.String())
		b.post("/logout", url.Values{})
		state := b.authURL().Query().Get("state")
		code, body, at := b.get(fmt.Sprintf("/auth/oidc/callback?state=%s&code=%s", state, url.QueryEscape(first.Query().Get("code"))))
		refused(t, b, code, body, at, "refused the sign-in code", "code exchange", 1)
	})
	t.Run("AWrongNonce", func(t *testing.T) {
		// Parley starts a sign-in; the code that comes back was asked for with another
		// nonce (the same PKCE challenge, so that only the nonce is wrong).
		b := op.browser(t)
		authURL := b.authURL()
		q := authURL.Query()
		state := q.Get("state")
		q.Set("nonce", "someone-elses-nonce")
		q.Set("state", "someone-elses-state")
		authURL.RawQuery = q.Encode()
		got := b.held(authURL, "mallory", "mallory-pw")
		code, body, at := b.get(fmt.Sprintf("/auth/oidc/callback?state=%s&code=%s", state, url.QueryEscape(got.Query().Get("code"))))
		refused(t, b, code, body, at, "belongs to another sign-in", "nonce does not match", 1)
	})
	t.Run("AWrongAudience", func(t *testing.T) {
		op.idp.IssueWrongAudienceOnce("some-other-app")
		b := op.browser(t)
		code, body, at := b.signIn("alice", "alice-pw", "/")
		refused(t, b, code, body, at, "not meant for this Parley", "id token audience", 1)
	})
	t.Run("AnExpiredToken", func(t *testing.T) {
		if err := op.idp.SetIDTokenLifetime("parley", -time.Minute); err != nil {
			t.Fatal(err)
		}
		defer op.idp.SetIDTokenLifetime("parley", 0)
		b := op.browser(t)
		code, body, at := b.signIn("alice", "alice-pw", "/")
		refused(t, b, code, body, at, "had expired", "id token expired", 1)
	})
	t.Run("TheProviderSaysNo", func(t *testing.T) {
		b := op.browser(t)
		code, body, at := b.get("/auth/oidc/callback?error=access_denied&error_description=The+user+cancelled&state=" + b.authURL().Query().Get("state"))
		refused(t, b, code, body, at, "did not sign you in: The user cancelled", "provider error: access_denied", 1)
	})
	t.Run("TheProviderSaysNoToASignInNotStartedHere", func(t *testing.T) {
		// Its words are not shown: anyone could write them into a link.
		b := op.browser(t)
		code, body, at := b.get("/auth/oidc/callback?error=x&error_description=Your+account+is+locked.+Call+555-0100")
		refused(t, b, code, body, at, "not a sign-in Parley started", "callback without state or code", 1)
		if strings.Contains(body, "555-0100") {
			t.Error("the page shows words from the link")
		}
	})
	t.Run("TooManyGroupsForTheTokenLeavesStaff", func(t *testing.T) {
		// Entra ID names no groups past 200, only where to read them: alice stays staff, in
		// her groups.
		op.browser(t).signIn("alice", "alice-pw", "/")
		op.idp.TamperNextIDToken(func(claims map[string]any) {
			delete(claims, "groups")
			claims["_claim_names"] = map[string]any{"groups": "src1"}
			claims["_claim_sources"] = map[string]any{"src1": map[string]any{"endpoint": "https://graph.example/v1.0/users/alice/getMemberObjects"}}
		})
		b := op.browser(t)
		if code, _, at := b.signIn("alice", "alice-pw", "/"); code != http.StatusOK || at.Path != "/" {
			t.Fatalf("sign-in with the groups elsewhere = %d at %s", code, at)
		}
		if u, groups := op.user(t, "alice"); u.Role != domain.RoleStaff || !slices.Equal(groups, []string{"ops", "parley-staff"}) {
			t.Errorf("alice is %s in %q, want staff in her groups still", u.Role, groups)
		}
	})
	t.Run("ANameTaken", func(t *testing.T) {
		before := op.accounts(t)
		if _, err := op.db.CreateUser(context.Background(), "bob", "", domain.RoleUser); err != nil {
			t.Fatal(err)
		}
		b := op.browser(t)
		code, body, _ := b.signIn("bob", "bob-pw", "/")
		if code != http.StatusConflict || !strings.Contains(body, "is taken") || b.signedIn() {
			t.Errorf("a name taken = %d, signed in %v: %s", code, b.signedIn(), body)
		}
		if n := op.accounts(t); n != before+1 {
			t.Errorf("%d accounts, want the %d there before and the bob made by hand", n, before)
		}
	})
	t.Run("TheProviderFailsAtTheCodeExchange", func(t *testing.T) {
		// Its token endpoint answers 503: out of reach, not a refusal; the sign-in is kept,
		// and a reload once it is back signs the person in.
		b := op.browser(t)
		callback := b.held(b.authURL(), "alice", "alice-pw")
		op.idp.Fail(oidctest.PathToken, http.StatusServiceUnavailable)
		code, body, _ := b.get(callback.String())
		op.idp.Fail(oidctest.PathToken, 0)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot reach Test IdP") || !strings.Contains(body, "Reload this page") {
			t.Fatalf("the callback with the token endpoint down = %d: %s", code, body)
		}
		if code, _, at := b.get(callback.String()); code != http.StatusOK || at.Path != "/" || !b.signedIn() {
			t.Fatalf("the reload once it is back = %d at %s, signed in %v", code, at, b.signedIn())
		}
	})
	t.Run("TheProvidersKeysOutOfReach", func(t *testing.T) {
		// A new signing key that Parley cannot fetch: the code is spent by then, so the page
		// says to sign in again (not to reload), and signing in again works once it is back.
		if _, err := op.idp.RotateKey(false); err != nil {
			t.Fatal(err)
		}
		op.idp.Fail(oidctest.PathKeys, http.StatusServiceUnavailable)
		b := op.browser(t)
		code, body, _ := b.signIn("alice", "alice-pw", "/")
		op.idp.Fail(oidctest.PathKeys, 0)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot reach Test IdP") || !strings.Contains(body, "Sign in again") || b.signedIn() {
			t.Fatalf("the callback with the keys out of reach = %d, signed in %v: %s", code, b.signedIn(), body)
		}
		if code, _, at := b.signIn("alice", "alice-pw", "/"); code != http.StatusOK || at.Path != "/" || !b.signedIn() {
			t.Fatalf("signing in again = %d at %s, signed in %v", code, at, b.signedIn())
		}
	})
	t.Run("TheProviderOutOfReachAtTheCallback", func(t *testing.T) {
		// The provider goes between the sign-in and its way back: a 503 that says so, not a
		// refusal, and the sign-in is kept for another try.
		b := op.browser(t)
		callback := b.held(b.authURL(), "alice", "alice-pw")
		op.idp.Close()
		for range 2 {
			code, body, _ := b.get(callback.String())
			if code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot reach Test IdP") {
				t.Fatalf("the callback with the provider gone = %d: %s", code, body)
			}
		}
	})
}

func TestOIDC_ProviderUnreachableAtStart(t *testing.T) {
	// An address nobody listens on yet: Parley starts, says the provider cannot be reached,
	// and signs people in once it is there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	op := newOIDCParley(t, addr, false)
	b := op.browser(t)
	code, body, _ := b.get("/auth/oidc/login")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot reach Test IdP") {
		t.Fatalf("sign-in without the provider = %d: %s", code, body)
	}
	if code, body, _ := b.get("/healthz"); code != http.StatusOK {
		t.Fatalf("healthz = %d %s", code, body)
	}
	base := op.URL
	op.idp = startIdP(t, addr, oidctest.Client{ID: "parley", Secret: "parley-secret", RedirectURIs: []string{base + "/auth/oidc/callback"}})
	waitFor(t, "Parley to read the provider's discovery document", func() bool {
		code, _, _ := op.browser(t).get("/auth/oidc/login")
		return code == http.StatusOK
	})
	if code, _, at := b.signIn("alice", "alice-pw", "/"); code != http.StatusOK || at.Path != "/" || !b.signedIn() {
		t.Fatalf("sign-in once the provider is there = %d at %s", code, at)
	}
}

// With the email as the account's name, the provider must have verified it.
func TestOIDC_AnEmailNamesAnAccountOnceVerified(t *testing.T) {
	op := newOIDCParleyWith(t, "127.0.0.1:0", true, func(o *web.NewServerOptions) { o.Auth.OIDC.NameClaim = "email" })
	waitFor(t, "the provider's discovery document", func() bool {
		code, _, _ := op.browser(t).get("/auth/oidc/login")
		return code == http.StatusOK
	})
	op.idp.TamperNextIDToken(func(claims map[string]any) { claims["email_verified"] = false })
	b := op.browser(t)
	if code, body, _ := b.signIn("bob", "bob-pw", "/"); code != http.StatusBadRequest || !strings.Contains(body, "has not verified your email address") || b.signedIn() {
		t.Errorf("an unverified address = %d, signed in %v", code, b.signedIn())
	}
	if code, _, _ := b.signIn("bob", "bob-pw", "/"); code != http.StatusOK || !b.signedIn() {
		t.Fatalf("a verified address = %d", code)
	}
	op.user(t, "bob@example.test")
}

// One address may sign in through the provider Limits.ProviderSignIns times a minute, each
// sign-in counted once (begun; its way back is free once it signs the person in), and past
// that is told to wait.
func TestOIDC_SignInsOfOneAddressAMinute(t *testing.T) {
	op := newOIDCParleyWith(t, "127.0.0.1:0", true, func(o *web.NewServerOptions) { o.Limits.ProviderSignIns = 3 })
	waitFor(t, "the provider's discovery document", func() bool { return strings.Contains(op.log.String(), "identity provider ready") })
	for i := range 3 {
		b := op.browser(t)
		if code, _, _ := b.signIn("alice", "alice-pw", "/"); code != http.StatusOK || !b.signedIn() {
			t.Fatalf("sign-in %d of 3 = %d", i+1, code)
		}
	}
	code, body, _ := op.browser(t).get("/auth/oidc/login")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "Too many sign-ins from your address") {
		t.Fatalf("a fourth sign-in in the minute = %d: %s", code, body)
	}
}
