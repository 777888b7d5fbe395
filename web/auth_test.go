package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// accountsServer is a Parley with local accounts: ann and bob are people, carol is staff.
type accountsServer struct {
	*testServer
	clock *testClock
}

// testClock is a clock the test moves and the server reads.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const testPassword = "correct horse battery staple"

// cheapPasswords hashes as the server does, at a cost a busy test machine hardly notices:
// the tests are about sign-in, not about argon2id's cost.
var cheapPasswords = &domain.PasswordHasher{Time: 1, MemoryKiB: 64}

func newAccountsServer(t *testing.T, auth web.AuthOptions, limits web.Limits, agents ...domain.Agent) *accountsServer {
	t.Helper()
	return newAccountsServerBeating(t, time.Hour, auth, limits, agents...)
}

// newAccountsServerBeating is newAccountsServer with streams' heartbeat every beat.
func newAccountsServerBeating(t *testing.T, beat time.Duration, auth web.AuthOptions, limits web.Limits, agents ...domain.Agent) *accountsServer {
	t.Helper()
	return newAccountsServerWith(t, web.NewServerOptions{Heartbeat: beat, Auth: auth, Limits: limits}, agents...)
}

// newAccountsServerWith is newAccountsServer with the server's options (its database and
// runner aside).
func newAccountsServerWith(t *testing.T, opts web.NewServerOptions, agents ...domain.Agent) *accountsServer {
	t.Helper()
	return newAccountsServerOn(t, storetest.Path(t), opts, nil, agents...)
}

// newAccountsServerOn is newAccountsServerWith on the database at path, with the agents'
// policies (who may use them, their approvers).
func newAccountsServerOn(t *testing.T, path string, opts web.NewServerOptions, policies map[string]domain.Policy, agents ...domain.Agent) *accountsServer {
	t.Helper()
	db := storetest.Open(t, path)
	clock := &testClock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	db.Now = clock.Now
	hash, err := cheapPasswords.Hash(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		name string
		role domain.Role
	}{{"carol", domain.RoleStaff}, {"ann", domain.RoleUser}, {"bob", domain.RoleUser}} {
		if _, err := db.CreateUser(context.Background(), u.name, hash, u.role); err != nil {
			t.Fatal(err)
		}
	}
	opts.Auth.Signup = true
	opts.DB, opts.Runner, opts.Passwords = db, webtest.RunnerWith(db, policies, agents...), cheapPasswords
	srv := startServer(t, db, opts)
	return &accountsServer{testServer: newTestServerFrom(t, db, srv), clock: clock}
}

// person is a browser signed in as one account: a cookie jar, no redirects followed.
type person struct {
	t      *testing.T
	base   string
	client *http.Client
}

func (as *accountsServer) browser(t *testing.T) *person {
	jar, _ := cookiejar.New(nil)
	return &person{t: t, base: as.URL, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (as *accountsServer) signIn(t *testing.T, name string) *person {
	t.Helper()
	p := as.browser(t)
	code, body, h := p.do(http.MethodPost, "/login", url.Values{"name": {name}, "password": {testPassword}}, nil)
	if code != http.StatusSeeOther || h.Get("Location") != "/" {
		t.Fatalf("sign in as %s = %d %s %v", name, code, body, h)
	}
	return p
}

// do sends a request; form values go as a form post, headers are added.
func (p *person) do(method, path string, form url.Values, headers map[string]string) (int, string, http.Header) {
	p.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, p.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && (strings.HasSuffix(path, "/stream") || path == "/live") {
		return resp.StatusCode, "", resp.Header // a stream never ends by itself
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (p *person) get(path string) (int, string) {
	p.t.Helper()
	code, body, _ := p.do(http.MethodGet, path, nil, nil)
	return code, body
}

// askerAndReader asks one question on the first message, then says what it got.
func askerAndReader() *scripted {
	return &scripted{name: "asker", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if r := lastResolution(in); r != nil {
			return out.Text(fmt.Sprintf("Noted: %v (%s).", r.Values["venue"], r.Outcome))
		}
		if in.Trigger == domain.TriggerMessage && len(in.History) < 4 {
			_, err := out.Ask(domain.Question{Message: "Which venue?", AllowCancel: true, Fields: []domain.Field{{Name: "venue", Kind: domain.KindText, Required: true}}})
			return err
		}
		return out.Text("ok")
	}}
}

func TestRoutes_OwnersStaffAndStrangers(t *testing.T) {
	// The channels the table adds get word of the questions asked after: they are a receiver
	// of the test's, on loopback, which the rule lets Parley reach here.
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	as := newAccountsServerWith(t, web.NewServerOptions{Heartbeat: time.Hour,
		Notify: web.NotifyOptions{Networks: mustNetworks(t, "127.0.0.1/32")}}, askerAndReader())
	ann, bob, carol := as.signIn(t, "ann"), as.signIn(t, "bob"), as.signIn(t, "carol")
	// Ann starts a conversation with a file attached.
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("agent", "asker")
	mw.WriteField("text", "Plan the offsite")
	fw, _ := mw.CreateFormFile("files", "guests.csv")
	fw.Write([]byte("name\nAnn\n"))
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, as.URL+"/conversations", &mp)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := ann.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("start = %d", resp.StatusCode)
	}
	conv := resp.Header.Get("Location")
	id := convID(t, conv)
	as.waitState(t, id, domain.StateWaiting)
	routes := []struct {
		method, path string
		form         url.Values
		// the status each person gets: the owner, another person, staff
		ann, bob, carol int
	}{
		{"GET", "/", nil, 200, 200, 200},
		{"POST", "/conversations", url.Values{"agent": {"asker"}, "text": {"My own"}}, 303, 303, 303},
		{"GET", "/inbox", nil, 200, 200, 200},
		{"GET", conv, nil, 200, 404, 200},
		{"GET", conv + "/stream", nil, 200, 404, 200},
		{"GET", conv + "/timeline", nil, 200, 404, 200},
		{"GET", conv + "/export.md", nil, 200, 404, 200},
		{"GET", conv + "/export.json", nil, 200, 404, 200},
		{"GET", conv + "/documents/1", nil, 200, 404, 200},
		{"GET", conv + "/documents/2", nil, 404, 404, 404},
		{"GET", "/review", nil, 404, 404, 200},
		{"GET", "/review/figures", nil, 404, 404, 200},
		{"GET", "/review/groups", nil, 404, 404, 200},
		{"GET", "/review/reasons", nil, 404, 404, 200},
		{"GET", "/review/queue", nil, 404, 404, 200},
		{"GET", "/review/export.jsonl?agent=asker", nil, 404, 404, 200},
		{"GET", "/review/labels", nil, 404, 404, 200},
		{"POST", "/review/labels", url.Values{"items": {"routes"}}, 404, 404, 303},
		{"POST", conv + "/notes", url.Values{"note": {"Looked at."}}, 404, 404, 303},
		{"POST", conv + "/labels", url.Values{"label": {"routes"}, "on": {"1"}}, 404, 404, 303},
		{"POST", fmt.Sprintf("/review/queue/%d/assign", id), url.Values{"assignee": {"0"}}, 404, 404, 303},
		{"POST", fmt.Sprintf("/review/queue/%d/reviewed", id), url.Values{}, 404, 404, 303},
		{"POST", "/review/reasons", url.Values{"items": {"wrong\nunsafe\ntoo slow\ndidn't follow instructions"}}, 404, 404, 303},
		{"POST", "/review/groups", url.Values{"group": {"routes"}, "people": {"ann"}}, 404, 404, 303},
		{"POST", "/review/groups/routes/add", url.Values{"people": {"bob"}, "role": {"asker"}}, 404, 404, 303},
		{"POST", "/review/groups/routes/remove", url.Values{"person": {"bob"}}, 404, 404, 303},
		{"POST", "/review/groups/routes/channels", url.Values{"kind": {"webhook"}, "target": {hook.URL + "/hooks/ops"}}, 404, 404, 303},
		{"POST", "/review/groups/routes/channels/remove", url.Values{"id": {"999"}}, 404, 404, 404},
		{"POST", "/review/groups/routes/channels/confirm", url.Values{"id": {"999"}}, 404, 404, 404},
		{"POST", "/review/groups/routes/delete", url.Values{}, 404, 404, 303},
		{"POST", "/settings/channels", url.Values{"kind": {"webhook"}, "target": {hook.URL + "/me"}}, 303, 303, 303},
		{"POST", "/settings/devices/remove", url.Values{"id": {"999"}}, 404, 404, 404},
		{"POST", "/settings/notifications", url.Values{"agent": {"asker"}}, 303, 303, 303},
		{"POST", "/settings/channels/remove", url.Values{"id": {"999"}}, 404, 404, 404},
		{"POST", "/settings/channels/confirm", url.Values{"id": {"999"}}, 404, 404, 404},
		// A question of one's own opens in its conversation; staff read it alone.
		{"GET", "/questions/1", nil, 303, 404, 200},
		{"POST", "/questions/1/decline", url.Values{"_reason": {"no"}}, 0, 404, 403},
		{"POST", "/questions/1/cancel", url.Values{}, 0, 404, 403},
		{"POST", "/questions/1/answer", url.Values{"venue": {"Lisbon"}}, 200, 404, 403},
		// An opinion: of the question just answered, its owner's (nobody else's, staff's
		// neither); of a reply there is not, nobody's.
		{"POST", conv + "/feedback/question/1?rating=useful", url.Values{}, 200, 404, 404},
		{"POST", conv + "/feedback/reply/999?rating=good", url.Values{}, 404, 404, 404},
		{"POST", conv + "/messages", url.Values{"text": {"and lunch"}}, 200, 404, 403},
		{"POST", conv + "/retry", url.Values{}, 204, 404, 403},
		{"POST", conv + "/stop", url.Values{}, 204, 404, 403},
		{"POST", conv + "/queued/999/remove", url.Values{}, 204, 404, 403},
		{"POST", conv + "/queued/send", url.Values{}, 200, 404, 403},
		{"POST", conv + "/versions/0", url.Values{}, 204, 404, 403},
		{"GET", conv + "/messages/999/edit", nil, 404, 404, 403},
		{"GET", conv + "/messages/1/edit", nil, 200, 404, 403},
		{"POST", conv + "/messages/999/edit", url.Values{"text": {"and dinner"}}, 200, 404, 403},
		{"POST", conv + "/regenerate", url.Values{}, 204, 404, 403},
		{"GET", "/live", nil, 200, 200, 200},
		{"GET", "/search?q=offsite", nil, 200, 200, 200},
		{"GET", "/archived", nil, 200, 200, 200},
		{"POST", conv + "/rename", url.Values{"title": {"Plan the offsite"}}, 303, 404, 403},
		{"POST", conv + "/archive", url.Values{"archived": {"0"}}, 303, 404, 403},
		{"POST", conv + "/delete", url.Values{}, 0, 404, 403},
		{"GET", "/settings", nil, 200, 200, 200},
		{"POST", "/settings", url.Values{"display_name": {""}}, 303, 303, 303},
		{"POST", "/settings/password", url.Values{"current": {"wrong"}}, 422, 422, 422},
		// Token names are each person's own: each makes and revokes their own "routes".
		{"POST", "/settings/tokens", url.Values{"name": {"routes"}}, 201, 201, 201},
		{"POST", "/settings/tokens/revoke", url.Values{"name": {"routes"}}, 303, 303, 303},
		{"GET", "/c/999", nil, 404, 404, 404},
		{"GET", "/c/abc", nil, 404, 404, 404},
	}
	// The table holds every route that needs a signed-in person.
	// Signing in through an identity provider answers 404 here (TestOIDC_SignIn has them).
	public := map[string]bool{"GET /healthz": true, "GET /robots.txt": true, "GET /static/*": true, "GET /sw.js": true, "GET /login": true, "POST /login": true,
		"POST /logout": true, "GET /signup": true, "POST /signup": true, "GET /auth/oidc/login": true, "GET /auth/oidc/callback": true,
		"GET /channels/confirm": true, "POST /channels/confirm": true} // the link mailed to an address is its proof
	covered := map[string]bool{}
	pattern := regexp.MustCompile(`^/(c|questions)/\d+`)
	for _, r := range routes {
		p, _, _ := strings.Cut(r.path, "?")
		p = pattern.ReplaceAllString(p, "/$1/:id")
		p = regexp.MustCompile(`/documents/\d+$`).ReplaceAllString(p, "/documents/:doc")
		p = regexp.MustCompile(`^/review/groups/routes/`).ReplaceAllString(p, "/review/groups/:name/")
		p = regexp.MustCompile(`^/review/queue/\d+/`).ReplaceAllString(p, "/review/queue/:id/")
		p = versionRoutes.Replace(p)
		covered[r.method+" "+p] = true
	}
	for _, r := range as.srv.Web.Routes() {
		// The API's routes have their own table (TestAPI_OwnersStaffAndStrangers), the MCP
		// server its own tests of tokens (web/inbound/mcpserver).
		if !public[r] && !covered[r] && !strings.Contains(r, "/c/999") && !strings.Contains(r, "/api/v1") && !strings.HasSuffix(r, " /mcp") {
			t.Errorf("route %s is not in the table", r)
		}
	}
	// Strangers and staff first, so that nothing they do could change what the owner sees.
	for _, who := range []struct {
		name string
		p    *person
		want func(int, int, int) int
	}{
		{"bob", bob, func(_, b, _ int) int { return b }},
		{"carol", carol, func(_, _, c int) int { return c }},
		{"ann", ann, func(a, _, _ int) int { return a }},
	} {
		for _, r := range routes {
			want := who.want(r.ann, r.bob, r.carol)
			if want == 0 {
				continue // the owner's decline and cancel would end the question the answer needs
			}
			code, body, _ := who.p.do(r.method, r.path, r.form, nil)
			if code != want {
				t.Errorf("%s %s %s = %d, want %d (%.120s)", who.name, r.method, r.path, code, want, body)
			}
			if want == 404 && strings.Contains(body, "Plan the offsite") {
				t.Errorf("%s %s %s leaks the conversation: %.200s", who.name, r.method, r.path, body)
			}
		}
	}
	// Bob's own list and inbox hold nothing of ann's; staff's inbox holds her question.
	if _, page := bob.get("/"); strings.Contains(page, "Plan the offsite") {
		t.Error("bob's home lists ann's conversation")
	}
	as.waitState(t, id, domain.StateDone)
	if _, page := carol.get(conv); !strings.Contains(page, "reading ann’s conversation as staff") || strings.Contains(page, `id="composer"`) {
		t.Error("staff's view of ann's conversation is not read-only")
	}
	rec, _ := as.db.Question(context.Background(), 1)
	if rec.Resolution == nil || rec.Resolution.By != "ann" || rec.Resolution.Values["venue"] != "Lisbon" {
		t.Errorf("resolution = %+v, want ann's answer alone", rec.Resolution)
	}
}

func TestStaffAnswerOnBehalf(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{StaffAnswer: true}, web.Limits{}, askerAndReader())
	ann, carol := as.signIn(t, "ann"), as.signIn(t, "carol")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"Plan"}}, nil)
	conv := h.Get("Location")
	as.waitState(t, convID(t, conv), domain.StateWaiting)
	if _, page := carol.get(conv); !strings.Contains(page, "You answer for ann") {
		t.Fatal("staff's form does not say it answers on ann's behalf")
	}
	if code, body, _ := carol.do(http.MethodPost, conv+"/messages", url.Values{"text": {"hi"}}, nil); code != 403 {
		t.Fatalf("staff message = %d %s: answering is allowed, writing is not", code, body)
	}
	if code, body, _ := carol.do(http.MethodPost, "/questions/1/answer", url.Values{"venue": {"Porto"}}, nil); code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	as.waitState(t, convID(t, conv), domain.StateDone)
	rec, _ := as.db.Question(context.Background(), 1)
	if rec.Resolution.By != "carol" || rec.Resolution.OnBehalfOf != "ann" {
		t.Fatalf("resolution = %+v", rec.Resolution)
	}
	_, page := carol.get(conv + "/timeline")
	for _, want := range []string{"answered question 1 on behalf of ann", "audit: answer-on-behalf", "Porto"} {
		if !strings.Contains(page, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
}

func TestCrossSitePostsAreRefused(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	form := url.Values{"agent": {"asker"}, "text": {"Plan"}}
	code, body, _ := ann.do(http.MethodPost, "/conversations", form, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	if code != http.StatusForbidden || !strings.Contains(body, "came from another site") {
		t.Fatalf("cross-site POST = %d %s, want 403", code, body)
	}
	code, _, _ = ann.do(http.MethodPost, "/conversations", form, map[string]string{"Origin": "https://evil.example"})
	if code != http.StatusForbidden {
		t.Fatalf("POST with a foreign Origin = %d, want 403", code)
	}
	if list, _, _ := as.db.ListConversations(context.Background(), domain.ConversationFilter{}); len(list) != 0 {
		t.Fatalf("a refused POST made %d conversations", len(list))
	}
	code, _, _ = ann.do(http.MethodPost, "/conversations", form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": as.URL})
	if code != http.StatusSeeOther {
		t.Fatalf("same-origin POST = %d, want 303", code)
	}
	// Datastar's own requests are checked the same way.
	code, _, _ = ann.do(http.MethodPost, "/c/1/retry", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site", "Datastar-Request": "true"})
	if code != http.StatusForbidden {
		t.Fatalf("cross-site Datastar POST = %d, want 403", code)
	}
}

func TestSecurityHeaders(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{})
	resp, err := http.Get(as.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "script-src 'self' 'unsafe-eval'", "object-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") == "" || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers = %v", resp.Header)
	}
}

func TestSignIn(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{LoginAttempts: 3})
	t.Run("PagesNeedASession", func(t *testing.T) {
		p := as.browser(t)
		code, _, h := p.do(http.MethodGet, "/c/1?x=1", nil, nil)
		if code != http.StatusSeeOther || h.Get("Location") != "/login?next=%2Fc%2F1%3Fx%3D1" {
			t.Fatalf("GET without a session = %d %v", code, h.Get("Location"))
		}
		if code, _, _ := p.do(http.MethodPost, "/conversations", url.Values{"text": {"x"}}, nil); code != http.StatusUnauthorized {
			t.Fatalf("POST without a session = %d, want 401", code)
		}
	})
	t.Run("RotationAtLogin", func(t *testing.T) {
		p := as.signIn(t, "ann")
		u, _ := url.Parse(as.URL)
		before := p.client.Jar.Cookies(u)
		if len(before) != 1 || before[0].Name != "parley_session" {
			t.Fatalf("cookies = %v, want the plain-named session cookie on http://", before)
		}
		// Signing in again, with the old cookie: a new id, and the old one no longer works.
		code, _, h := p.do(http.MethodPost, "/login", url.Values{"name": {"ann"}, "password": {testPassword}, "next": {"/inbox"}}, nil)
		after := p.client.Jar.Cookies(u)
		if code != http.StatusSeeOther || h.Get("Location") != "/inbox" || len(after) != 1 || after[0].Value == before[0].Value {
			t.Fatalf("second sign-in = %d %v, cookies %v", code, h, after)
		}
		old := as.browser(t)
		old.client.Jar.SetCookies(u, before)
		if code, _ := old.get("/inbox"); code != http.StatusSeeOther {
			t.Fatalf("the session from before sign-in still works: %d", code)
		}
		setCookie := h.Get("Set-Cookie")
		for _, want := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
			if !strings.Contains(setCookie, want) {
				t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
			}
		}
	})
	t.Run("HTTPSOnlyFromATrustedProxy", func(t *testing.T) {
		_, _, h := as.browser(t).do(http.MethodPost, "/login", url.Values{"name": {"ann"}, "password": {testPassword}}, map[string]string{"X-Forwarded-Proto": "https"})
		if sc := h.Get("Set-Cookie"); !strings.HasPrefix(sc, "parley_session=") {
			t.Fatalf("Set-Cookie with X-Forwarded-Proto from an untrusted peer = %q, want the plain cookie", sc)
		}
	})
	t.Run("IdleAndAbsoluteExpiry", func(t *testing.T) {
		p := as.signIn(t, "bob")
		as.clock.Add(29 * time.Minute)
		if code, _ := p.get("/inbox"); code != 200 {
			t.Fatalf("after 29 min = %d", code)
		}
		as.clock.Add(31 * time.Minute)
		if code, _ := p.get("/inbox"); code != http.StatusSeeOther {
			t.Fatalf("after 31 min idle = %d, want a redirect to sign in", code)
		}
		p = as.signIn(t, "bob")
		for range 25 {
			as.clock.Add(29 * time.Minute)
			p.get("/inbox")
		}
		if code, _ := p.get("/inbox"); code != http.StatusSeeOther {
			t.Fatalf("after 12 h of activity = %d, want a redirect to sign in", code)
		}
	})
	t.Run("Logout", func(t *testing.T) {
		p := as.signIn(t, "ann")
		if code, _, _ := p.do(http.MethodPost, "/logout", url.Values{}, nil); code != http.StatusSeeOther {
			t.Fatalf("logout = %d", code)
		}
		if code, _ := p.get("/"); code != http.StatusSeeOther {
			t.Fatalf("after logout = %d", code)
		}
	})
	t.Run("WrongPasswordsAreLimited", func(t *testing.T) {
		p := as.browser(t)
		for i := range 3 {
			code, body, _ := p.do(http.MethodPost, "/login", url.Values{"name": {"carol"}, "password": {"wrong password " + fmt.Sprint(i)}}, nil)
			if code != http.StatusUnauthorized || !strings.Contains(body, "do not match an account") || !strings.Contains(body, `value="carol"`) {
				t.Fatalf("wrong password %d = %d %.200s", i, code, body)
			}
		}
		code, body, h := p.do(http.MethodPost, "/login", url.Values{"name": {"carol"}, "password": {testPassword}}, nil)
		if code != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins") || h.Get("Retry-After") == "" {
			t.Fatalf("after 3 failures = %d %q %v, want 429", code, body, h)
		}
		as.clock.Add(15 * time.Minute)
		as.signIn(t, "carol")
	})
	t.Run("UnknownNameLooksLikeAWrongPassword", func(t *testing.T) {
		code, body, _ := as.browser(t).do(http.MethodPost, "/login", url.Values{"name": {"nobody"}, "password": {testPassword}}, nil)
		if code != http.StatusUnauthorized || !strings.Contains(body, "do not match an account") {
			t.Fatalf("unknown name = %d %.200s", code, body)
		}
	})
}

// Behind a trusted proxy that terminates TLS the cookie is __Host- and Secure, and only that
// cookie is read: a plain one planted by another page does not sign anyone in.
func TestSecureCookieBehindATLSProxy(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, web.Limits{})
	https := map[string]string{"X-Forwarded-Proto": "https"}
	p := as.browser(t)
	_, _, h := p.do(http.MethodPost, "/login", url.Values{"name": {"ann"}, "password": {testPassword}}, https)
	sc := h.Get("Set-Cookie")
	if !strings.HasPrefix(sc, "__Host-parley_session=") || !strings.Contains(sc, "Secure") || !strings.Contains(sc, "Path=/") || strings.Contains(sc, "Domain") {
		t.Fatalf("Set-Cookie over HTTPS = %q", sc)
	}
	token := strings.TrimPrefix(strings.SplitN(sc, ";", 2)[0], "__Host-parley_session=")
	if code, _, _ := p.do(http.MethodGet, "/inbox", nil, map[string]string{"X-Forwarded-Proto": "https", "Cookie": "__Host-parley_session=" + token}); code != 200 {
		t.Fatalf("with the __Host- cookie = %d", code)
	}
	if code, _, _ := as.browser(t).do(http.MethodGet, "/inbox", nil, map[string]string{"X-Forwarded-Proto": "https", "Cookie": "parley_session=" + token}); code != http.StatusSeeOther {
		t.Fatalf("with a plain cookie over HTTPS = %d, want a redirect to sign in", code)
	}
	_, _, h = p.do(http.MethodPost, "/logout", url.Values{}, https)
	if cookies := h.Values("Set-Cookie"); len(cookies) != 2 {
		t.Fatalf("logout cleared %q, want both cookie names", cookies)
	}
}

func TestSafeNext(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{})
	for next, want := range map[string]string{
		"/c/3?x=1":             "/c/3?x=1",
		"//evil.example":       "/",
		"/\\evil.example":      "/",
		"/\t/evil.example":     "/",
		"https://evil.example": "/",
		"c/3":                  "/",
	} {
		_, _, h := as.browser(t).do(http.MethodPost, "/login", url.Values{"name": {"ann"}, "password": {testPassword}, "next": {next}}, nil)
		if got := h.Get("Location"); got != want {
			t.Errorf("next %q: redirected to %q, want %q", next, got, want)
		}
	}
}

func TestNoSignInAnswersOnlyToLocalhost(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	for host, want := range map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200, "evil.example": 403, "evil.example:8080": 403} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/inbox", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s = %d, want %d (DNS rebinding)", host, resp.StatusCode, want)
		}
	}
}

func TestSignup(t *testing.T) {
	db := newDB(t)
	srv := startServer(t, db, web.NewServerOptions{DB: db, Runner: runnerFor(db), Heartbeat: time.Hour, Auth: web.AuthOptions{Signup: false}, Passwords: cheapPasswords})
	as := &accountsServer{testServer: newTestServerFrom(t, db, srv)}
	p := as.browser(t)
	// Nobody yet: sign-in sends to the first account, which can be made though sign-up is off.
	if code, _, h := p.do(http.MethodGet, "/login", nil, nil); code != http.StatusSeeOther || h.Get("Location") != "/signup" {
		t.Fatalf("login before any account = %d %v", code, h.Get("Location"))
	}
	if _, page := p.get("/signup"); !strings.Contains(page, "will be <strong>staff</strong>") {
		t.Fatal("the first sign-up does not say it makes staff")
	}
	code, body, _ := p.do(http.MethodPost, "/signup", url.Values{"name": {"dana"}, "password": {"short"}, "confirm": {"short"}}, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "at least 10 characters") || !strings.Contains(body, `value="dana"`) || strings.Contains(body, "short") {
		t.Fatalf("short password = %d %.300s", code, body)
	}
	code, body, _ = p.do(http.MethodPost, "/signup", url.Values{"name": {"dana"}, "password": {testPassword}, "confirm": {testPassword + "!"}}, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "The two passwords differ.") {
		t.Fatalf("mismatch = %d %.300s", code, body)
	}
	long := strings.Repeat("a long passphrase ", 8) // 144 characters
	if code, _, _ = p.do(http.MethodPost, "/signup", url.Values{"name": {"dana"}, "password": {long}, "confirm": {long}}, nil); code != http.StatusSeeOther {
		t.Fatalf("sign-up = %d", code)
	}
	if code, page := p.get("/review"); code != 200 || !strings.Contains(page, "Review") {
		t.Fatalf("the first account is not staff: /review = %d", code)
	}
	// Later, with sign-up off, nobody else can make an account.
	if code, body, _ := as.browser(t).do(http.MethodPost, "/signup", url.Values{"name": {"eve"}, "password": {testPassword}, "confirm": {testPassword}}, nil); code != http.StatusForbidden || !strings.Contains(body, "Sign-up is off") {
		t.Fatalf("second sign-up with sign-up off = %d %.200s", code, body)
	}
	if _, _, err := db.UserByName(context.Background(), "eve"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatal("eve's account was made")
	}
}

func TestProxyAuth(t *testing.T) {
	trust := func(prefix string) web.AuthOptions {
		return web.AuthOptions{Mode: web.AuthProxy, TrustedProxies: []netip.Prefix{netip.MustParsePrefix(prefix)}}
	}
	t.Run("SpoofedHeaderFromAnUntrustedAddress", func(t *testing.T) {
		as := newAccountsServer(t, trust("10.0.0.0/8"), web.Limits{})
		code, body, _ := as.browser(t).do(http.MethodGet, "/review", nil, map[string]string{"Remote-User": "carol"})
		if code != http.StatusForbidden || strings.Contains(body, "Review") {
			t.Fatalf("Remote-User from 127.0.0.1, trusting 10/8 = %d %.200s", code, body)
		}
	})
	t.Run("TrustedProxy", func(t *testing.T) {
		as := newAccountsServer(t, trust("127.0.0.1/32"), web.Limits{})
		p := as.browser(t)
		if code, page, _ := p.do(http.MethodGet, "/review", nil, map[string]string{"Remote-User": "carol"}); code != 200 || !strings.Contains(page, "carol") {
			t.Fatalf("staff through the proxy = %d", code)
		}
		if code, _, _ := p.do(http.MethodGet, "/", nil, map[string]string{"Remote-User": "frank"}); code != 200 {
			t.Fatalf("a new person through the proxy = %d", code)
		}
		if u, _, err := as.db.UserByName(context.Background(), "frank"); err != nil || u.Role != domain.RoleUser {
			t.Fatalf("frank = %+v, %v", u, err)
		}
		if code, _, _ := p.do(http.MethodGet, "/", nil, nil); code != http.StatusUnauthorized {
			t.Fatalf("no user header = %d, want 401", code)
		}
		if code, _, _ := p.do(http.MethodGet, "/", nil, map[string]string{"Remote-User": domain.A2AAccount}); code != http.StatusForbidden {
			t.Fatalf("the A2A service account through the proxy = %d, want 403", code)
		}
		if code, _, _ := p.do(http.MethodPost, "/login", url.Values{"name": {"carol"}, "password": {testPassword}}, nil); code != 404 {
			t.Fatalf("password sign-in in proxy mode = %d, want 404", code)
		}
	})
	t.Run("HeadersMustAgree", func(t *testing.T) {
		opts := trust("127.0.0.1/32")
		opts.ProxyHeaders = []string{"X-Forwarded-User", "Remote-User"}
		as := newAccountsServer(t, opts, web.Limits{})
		p := as.browser(t)
		// The proxy set X-Forwarded-User; the client's own Remote-User came along.
		if code, _, _ := p.do(http.MethodGet, "/review", nil, map[string]string{"X-Forwarded-User": "ann", "Remote-User": "carol"}); code != http.StatusForbidden {
			t.Fatalf("two headers naming two people = %d, want 403", code)
		}
		if code, _, _ := p.do(http.MethodGet, "/", nil, map[string]string{"X-Forwarded-User": "ann"}); code != 200 {
			t.Fatalf("one header = %d", code)
		}
	})
}

func TestLimits(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{MessagesPerMinute: 3, Streams: 2}, askerAndReader())
	ann := as.signIn(t, "ann")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"one"}}, nil)
	conv := h.Get("Location")
	as.waitState(t, convID(t, conv), domain.StateWaiting)
	t.Run("Messages", func(t *testing.T) {
		for i := range 2 {
			if code, body, _ := ann.do(http.MethodPost, conv+"/messages", url.Values{"text": {fmt.Sprint("more ", i)}}, nil); code != 200 {
				t.Fatalf("message %d = %d %s", i, code, body)
			}
		}
		code, body, h := ann.do(http.MethodPost, conv+"/messages", url.Values{"text": {"too many"}}, nil)
		if code != http.StatusTooManyRequests || !strings.Contains(body, "You are sending messages too fast (at most 3 a minute)") || h.Get("Retry-After") != "20" {
			t.Fatalf("4th message in a minute = %d %q Retry-After %q", code, body, h.Get("Retry-After"))
		}
		// Others are not held back by ann.
		bob := as.signIn(t, "bob")
		if code, _, _ := bob.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"mine"}}, nil); code != http.StatusSeeOther {
			t.Fatalf("bob's message = %d", code)
		}
		as.clock.Add(20 * time.Second)
		if code, _, _ := ann.do(http.MethodPost, conv+"/messages", url.Values{"text": {"later"}}, nil); code != 200 {
			t.Fatalf("after 20 s = %d", code)
		}
	})
	t.Run("Streams", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		open := func() *http.Response {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.URL+conv+"/stream", nil)
			resp, err := ann.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		a, b := open(), open()
		if a.StatusCode != 200 || b.StatusCode != 200 {
			t.Fatalf("two streams = %d, %d", a.StatusCode, b.StatusCode)
		}
		c := open()
		body, _ := io.ReadAll(c.Body)
		if c.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "You have 2 Parley pages open") {
			t.Fatalf("third stream = %d %s", c.StatusCode, body)
		}
		a.Body.Close()
		// The server notices the closed stream and lets another one in.
		deadline := time.Now().Add(5 * time.Second)
		for {
			d := open()
			if d.StatusCode == 200 {
				d.Body.Close()
				break
			}
			d.Body.Close()
			if time.Now().After(deadline) {
				t.Fatal("a closed stream still counts")
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.Body.Close()
	})
	t.Run("StreamsWhileAPageGoesToAnother", func(t *testing.T) {
		// A page's stream that arrives before the page it replaces has closed its own waits
		// for it, instead of being refused.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		open := func() *http.Response {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.URL+conv+"/stream", nil)
			resp, err := ann.client.Do(req)
			if err != nil {
				t.Error(err)
				return nil
			}
			return resp
		}
		var held []*http.Response
		deadline := time.Now().Add(5 * time.Second)
		for len(held) < 2 { // the streams of the subtest before may still be closing
			if r := open(); r != nil && r.StatusCode == 200 {
				held = append(held, r)
			} else if r != nil {
				r.Body.Close()
				if time.Now().After(deadline) {
					t.Fatal("two streams could not be opened")
				}
			}
		}
		next := make(chan *http.Response, 1)
		go func() { next <- open() }()
		held[0].Body.Close()
		r := <-next
		if r == nil || r.StatusCode != 200 {
			t.Fatalf("the stream of the next page = %v", r)
		}
		r.Body.Close()
		held[1].Body.Close()
	})
}

// Many wrong passwords at once are counted before any is checked: no more than the limit
// are tried.
func TestSignIn_ABurstIsCounted(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{LoginAttempts: 3})
	codes := make(chan int, 10)
	for i := range 10 {
		go func() {
			code, _, _ := as.browser(t).do(http.MethodPost, "/login", url.Values{"name": {"carol"}, "password": {fmt.Sprint("guess number ", i)}}, nil)
			codes <- code
		}()
	}
	counts := map[int]int{}
	for range 10 {
		counts[<-codes]++
	}
	if counts[http.StatusUnauthorized] != 3 || counts[http.StatusTooManyRequests] != 7 {
		t.Fatalf("statuses = %v, want 3 checked (401) and 7 refused (429)", counts)
	}
}

func TestChangePassword(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{Mode: web.AuthLocal}, web.Limits{})
	ann, other := as.signIn(t, "ann"), as.signIn(t, "ann")
	code, body, _ := ann.do(http.MethodPost, "/settings/password", url.Values{"current": {"wrong"}, "password": {"short"}, "confirm": {"x"}}, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "That is not your current password.") || !strings.Contains(body, `id="new-error">`) {
		t.Fatalf("wrong current password = %d %.600s", code, body)
	}
	const next = "a new and longer passphrase"
	code, _, h := ann.do(http.MethodPost, "/settings/password", url.Values{"current": {testPassword}, "password": {next}, "confirm": {next}}, nil)
	if code != http.StatusSeeOther || h.Get("Location") != "/settings?saved=password" {
		t.Fatalf("change = %d %v", code, h)
	}
	if code, _ := ann.get("/settings"); code != http.StatusOK {
		t.Errorf("the browser that changed it is signed out: %d", code)
	}
	if code, _ := other.get("/settings"); code != http.StatusSeeOther {
		t.Errorf("another session of ann's goes on: %d", code)
	}
	p := as.browser(t)
	if code, _, _ := p.do(http.MethodPost, "/login", url.Values{"name": {"ann"}, "password": {next}}, nil); code != http.StatusSeeOther {
		t.Errorf("sign-in with the new password = %d", code)
	}
	// Guessing the current password is counted as sign-ins are.
	last := 0
	for range 12 {
		last, _, _ = p.do(http.MethodPost, "/settings/password", url.Values{"current": {"guess"}, "password": {next}, "confirm": {next}}, nil)
	}
	if last != http.StatusTooManyRequests {
		t.Errorf("the 12th wrong guess = %d, want 429", last)
	}
}

// Staff's waiting count holds only the questions they may answer: their own, and everyone's
// when they answer on people's behalf.
func TestWaitingCount_OnlyWhatTheViewerMayAnswer(t *testing.T) {
	for _, staffAnswer := range []bool{false, true} {
		as := newAccountsServer(t, web.AuthOptions{StaffAnswer: staffAnswer}, web.Limits{}, askerAndReader())
		ann, bob, carol := as.signIn(t, "ann"), as.signIn(t, "bob"), as.signIn(t, "carol")
		_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"Plan"}}, nil)
		as.waitState(t, convID(t, h.Get("Location")), domain.StateWaiting)
		want := map[*person]string{ann: `data-waiting="1"`, bob: `data-waiting="0"`, carol: `data-waiting="0"`}
		if staffAnswer {
			want[carol] = `data-waiting="1"`
		}
		for p, w := range want {
			if _, page := p.get("/"); !strings.Contains(page, w) {
				t.Errorf("staff answer %v: a page lacks %s", staffAnswer, w)
			}
		}
	}
}

// versionRoutes turns the paths of the tables' version and queue rows into their routes.
var versionRoutes = strings.NewReplacer("/queued/999/", "/queued/:queued/", "/versions/0", "/versions/:n", "/messages/999/", "/messages/:event/", "/messages/1/", "/messages/:event/",
	"/replies/999/", "/replies/:event/", "/feedback/reply/999", "/feedback/:item/:item_id", "/feedback/question/1", "/feedback/:item/:item_id")
