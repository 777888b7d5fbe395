package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
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

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/oidctest"
)

// oidcParley is a Parley whose people sign in through a real OpenID Connect provider
// (web/oidctest: zitadel's provider package) started by the test, both on 127.0.0.1.
type oidcParley struct {
	*testServer
	idp *oidctest.Provider
	log *syncBuffer
}

// syncBuffer is a log the test reads while the server writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The provider's people: alice is in ops and the staff group, bob in dev, mallory in no
// group; clients: parley.
var idpUsers = []oidctest.User{
	{Username: "alice", Password: "alice-pw", Name: "Alice", Email: "alice@example.test", Groups: []string{"/ops", "/parley-staff"}},
	{Username: "bob", Password: "bob-pw", Name: "Bob", Email: "bob@example.test", Groups: []string{"dev"}},
	{Username: "mallory", Password: "mallory-pw", Name: "Mallory", Email: "mallory@example.test"},
}

// newOIDCParley starts Parley with --auth oidc against a provider at idpAddr (one started
// here when idpAddr is ""), with staff from the group parley-staff.
func newOIDCParley(t *testing.T, idpAddr string, withIdP bool, agents ...domain.Agent) *oidcParley {
	t.Helper()
	return newOIDCParleyWith(t, idpAddr, withIdP, nil, agents...)
}

// newOIDCParleyWith is newOIDCParley with its settings changed.
func newOIDCParleyWith(t *testing.T, idpAddr string, withIdP bool, change func(*web.NewServerOptions), agents ...domain.Agent) *oidcParley {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	client := oidctest.Client{ID: "parley", Secret: "parley-secret", RedirectURIs: []string{base + "/auth/oidc/callback"},
		PostLogoutRedirectURIs: []string{base + "/login?signed_out=1"}}
	op := &oidcParley{log: &syncBuffer{}}
	issuer := "http://" + idpAddr
	if withIdP {
		op.idp = startIdP(t, idpAddr, client)
		issuer = op.idp.Issuer
	}
	db := newDB(t)
	opts := web.NewServerOptions{DB: db, Runner: runnerFor(db, agents...), Heartbeat: time.Hour,
		Logger: slog.New(slog.NewTextHandler(op.log, nil)),
		Notify: web.NotifyOptions{PublicURL: base},
		Auth:   web.AuthOptions{Mode: web.AuthOIDC, OIDC: web.OIDCOptions{Issuer: issuer, ClientID: "parley", ClientSecret: "parley-secret", StaffGroup: "/parley-staff", ProviderName: "Test IdP"}},
		// Everyone here signs in from 127.0.0.1, many times a minute.
		Limits:  web.Limits{ProviderSignIns: 10000},
		Metrics: web.MetricsOptions{Open: true}}
	if change != nil {
		change(&opts)
	}
	srv := startServer(t, db, opts)
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	op.testServer = &testServer{Server: ts, db: db, srv: srv}
	return op
}

func startIdP(t *testing.T, addr string, client oidctest.Client) *oidctest.Provider {
	t.Helper()
	p, err := oidctest.Start(oidctest.Options{Addr: addr, Users: slices.Clone(idpUsers), Clients: []oidctest.Client{client}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// oidcBrowser is a browser: a cookie jar, redirects followed (to the provider and back).
type oidcBrowser struct {
	t      *testing.T
	client *http.Client
	base   string
}

func (op *oidcParley) browser(t *testing.T) *oidcBrowser {
	jar, _ := cookiejar.New(nil)
	return &oidcBrowser{t: t, base: op.URL, client: &http.Client{Jar: jar, Timeout: 20 * time.Second}}
}

// get follows redirects and returns the final response's status, body and URL.
func (b *oidcBrowser) get(u string) (int, string, *url.URL) {
	b.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = b.base + u
	}
	resp, err := b.client.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Request.URL
}

func (b *oidcBrowser) post(u string, form url.Values) (int, string, *url.URL) {
	b.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = b.base + u
	}
	resp, err := b.client.PostForm(u, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Request.URL
}

var loginRequestID = regexp.MustCompile(`name="id" value="([^"]*)"`)

// provider is the page the provider's login form is on, filled in with the password: it
// returns where the browser ended up.
func (b *oidcBrowser) login(loginPage *url.URL, body, user, password string) (int, string, *url.URL) {
	b.t.Helper()
	m := loginRequestID.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no login form at %s: %s", loginPage, body)
	}
	form := url.Values{"id": {m[1]}, "username": {user}, "password": {password}}
	return b.post(loginPage.Scheme+"://"+loginPage.Host+"/login", form)
}

// authURL starts a sign-in at Parley and returns where it sends the browser: the
// provider's authorization URL, with the sign-in's state, nonce and PKCE challenge.
func (b *oidcBrowser) authURL() *url.URL {
	b.t.Helper()
	noFollow := &http.Client{Jar: b.client.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(b.base + "/auth/oidc/login")
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || u.Host == "" {
		b.t.Fatalf("Parley's sign-in sends the browser to %q", resp.Header.Get("Location"))
	}
	return u
}

// held goes to the provider's authorization URL, signs in there, and returns where the
// provider sends the browser back (Parley's callback), without going there.
func (b *oidcBrowser) held(authURL *url.URL, user, password string) *url.URL {
	b.t.Helper()
	_, body, at := b.get(authURL.String())
	m := loginRequestID.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no login form at %s", at)
	}
	noFollow := &http.Client{Jar: b.client.Jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == "/auth/oidc/callback" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := noFollow.PostForm(at.Scheme+"://"+at.Host+"/login", url.Values{"id": {m[1]}, "username": {user}, "password": {password}})
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	callback, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || callback.Path != "/auth/oidc/callback" {
		b.t.Fatalf("the provider sends the browser to %q", resp.Header.Get("Location"))
	}
	return callback
}

// signIn goes to Parley's sign-in, through the provider's login page, and back.
func (b *oidcBrowser) signIn(user, password, next string) (int, string, *url.URL) {
	b.t.Helper()
	code, body, at := b.get("/auth/oidc/login?next=" + url.QueryEscape(next))
	if code != http.StatusOK || at.Path != "/login" || !strings.Contains(body, `name="password"`) {
		b.t.Fatalf("sign-in did not reach the provider's login page: %d at %s", code, at)
	}
	return b.login(at, body, user, password)
}

// signedIn reports whether the browser is signed in to Parley: its home page, not a
// redirect to the sign-in page.
func (b *oidcBrowser) signedIn() bool {
	b.t.Helper()
	noFollow := &http.Client{Jar: b.client.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(b.base + "/")
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (op *oidcParley) user(t *testing.T, name string) (domain.User, []string) {
	t.Helper()
	u, _, err := op.db.UserByName(context.Background(), name)
	if err != nil {
		t.Fatalf("account %s: %v", name, err)
	}
	return u, memberOf(t, op.db, u.ID)
}

func memberOf(t *testing.T, db *store.DB, userID int64) []string {
	t.Helper()
	gs, err := db.MemberGroups(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func (op *oidcParley) accounts(t *testing.T) int {
	t.Helper()
	people, err := op.db.Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(people)
}

func TestOIDC_SignIn(t *testing.T) {
	op := newOIDCParley(t, "127.0.0.1:0", true)
	waitFor(t, "the provider's discovery document", func() bool {
		code, _, _ := op.browser(t).get("/auth/oidc/login")
		return code == http.StatusOK
	})

	t.Run("ThePageSendsToTheProvider", func(t *testing.T) {
		b := op.browser(t)
		code, body, at := b.get("/c/1")
		if code != http.StatusOK || at.Path != "/login" || !strings.Contains(body, "Sign in with Test IdP") {
			t.Fatalf("a page while signed out = %d at %s", code, at)
		}
		if !strings.Contains(body, `/auth/oidc/login?next=%2Fc%2F1`) {
			t.Errorf("the sign-in button does not come back to /c/1")
		}
	})

	t.Run("FirstSignInMakesTheAccountWithItsGroupsAndRole", func(t *testing.T) {
		alice := op.browser(t)
		code, _, at := alice.signIn("alice", "alice-pw", "/settings")
		if code != http.StatusOK || at.String() != op.URL+"/settings" {
			t.Fatalf("signed in at %d %s, want the page asked for", code, at)
		}
		u, groups := op.user(t, "alice")
		if u.Role != domain.RoleStaff || !slices.Equal(groups, []string{"ops", "parley-staff"}) {
			t.Errorf("alice is %s in %q, want staff in ops and parley-staff", u.Role, groups)
		}
		bob := op.browser(t)
		bob.signIn("bob", "bob-pw", "/")
		u, groups = op.user(t, "bob")
		if u.Role != domain.RoleUser || !slices.Equal(groups, []string{"dev"}) {
			t.Errorf("bob is %s in %q", u.Role, groups)
		}
		// The groups are marked as the provider's on the review desk.
		_, page, _ := alice.get("/review/groups")
		if !strings.Contains(page, "From the identity provider") {
			t.Errorf("Review → Groups does not say the groups come from the provider")
		}
		entries, _ := op.db.AuditLog(context.Background(), 0, 50)
		var signIns int
		for _, e := range entries {
			if e.Action == "sign in" && strings.Contains(e.Detail, "issuer "+op.idp.Issuer+", subject alice") {
				signIns++
			}
		}
		if signIns != 1 {
			t.Errorf("%d audited sign-ins of alice with issuer and subject, want 1", signIns)
		}
	})

	t.Run("GroupsAndStaffSyncedAtEachSignIn", func(t *testing.T) {
		if err := op.idp.SetUserGroups("alice", []string{"/dev"}); err != nil {
			t.Fatal(err)
		}
		if err := op.idp.SetUserGroups("bob", []string{"dev", "/parley-staff"}); err != nil {
			t.Fatal(err)
		}
		op.browser(t).signIn("alice", "alice-pw", "/")
		op.browser(t).signIn("bob", "bob-pw", "/")
		if u, groups := op.user(t, "alice"); u.Role != domain.RoleUser || !slices.Equal(groups, []string{"dev"}) {
			t.Errorf("alice is %s in %q, want a person in dev only", u.Role, groups)
		}
		if u, groups := op.user(t, "bob"); u.Role != domain.RoleStaff || !slices.Equal(groups, []string{"dev", "parley-staff"}) {
			t.Errorf("bob is %s in %q, want staff", u.Role, groups)
		}
		// Back as they were, for the tests that follow.
		op.idp.SetUserGroups("alice", []string{"/ops", "/parley-staff"})
		op.idp.SetUserGroups("bob", []string{"dev"})
	})

	t.Run("ManyAtOnce", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 3 {
			for _, u := range idpUsers[:2] {
				wg.Go(func() {
					b := op.browser(t)
					b.signIn(u.Username, u.Password, "/")
					if !b.signedIn() {
						t.Errorf("%s is not signed in", u.Username)
					}
				})
			}
		}
		wg.Wait()
		if n := op.accounts(t); n != 2 {
			t.Errorf("%d accounts, want alice's and bob's", n)
		}
	})

	t.Run("KeyRotationPickedUp", func(t *testing.T) {
		if _, err := op.idp.RotateKey(false); err != nil {
			t.Fatal(err)
		}
		b := op.browser(t)
		if code, body, at := b.signIn("bob", "bob-pw", "/"); code != http.StatusOK || at.Path != "/" || !b.signedIn() {
			t.Fatalf("sign-in after the provider's keys rotated = %d at %s: %s", code, at, body)
		}
	})

	t.Run("SignOutGoesThroughTheProvider", func(t *testing.T) {
		b := op.browser(t)
		b.signIn("bob", "bob-pw", "/")
		before := op.idp.LogoutCount("bob")
		code, body, at := b.post("/logout", url.Values{})
		if code != http.StatusOK || at.Path != "/login" || at.Query().Get("signed_out") == "" || !strings.Contains(body, "You are signed out") {
			t.Fatalf("sign-out ended at %d %s", code, at)
		}
		if op.idp.LogoutCount("bob") != before+1 {
			t.Error("the provider's session was not ended")
		}
		if b.signedIn() {
			t.Error("still signed in to Parley")
		}
	})

	t.Run("TokensWorkForThem", func(t *testing.T) {
		b := op.browser(t)
		b.signIn("bob", "bob-pw", "/")
		code, body, _ := b.post("/settings/tokens", url.Values{"name": {"laptop"}})
		token := regexp.MustCompile(`parley_[\w-]{43}`).FindString(body)
		if code != http.StatusCreated || token == "" {
			t.Fatalf("making a token = %d, no token shown", code)
		}
		req, _ := http.NewRequest(http.MethodGet, op.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		me, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(me), `"name":"bob"`) {
			t.Errorf("/api/v1/me with bob's token = %d %s", resp.StatusCode, me)
		}
	})
}
