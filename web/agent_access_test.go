package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// The agents of the access tests: "open" is everyone's; "deploy" is the group ops' (and
// staff's), and asks before it answers.
var accessPolicies = map[string]domain.Policy{"deploy": {Access: domain.Access{"group:ops"}}}

func accessAgents() []domain.Agent {
	open := askerAndReader()
	open.name = "open"
	deploy := askerAndReader()
	deploy.name = "deploy"
	return []domain.Agent{open, deploy}
}

// newAccessServer is a Parley with local accounts (ann and bob people, carol staff), ann in
// the group ops, on the database at path.
func newAccessServer(t *testing.T, path string) *accountsServer {
	t.Helper()
	as := newAccountsServerOn(t, path, web.NewServerOptions{Heartbeat: time.Hour}, accessPolicies, accessAgents()...)
	if _, err := as.db.AddToGroup(context.Background(), "ops", []string{"ann"}, domain.RoleMember, "carol"); err != nil {
		t.Fatal(err)
	}
	return as
}

func TestAgentAccess_PickerAndStart(t *testing.T) {
	as := newAccessServer(t, storetest.Path(t))
	ann, bob, carol := as.signIn(t, "ann"), as.signIn(t, "bob"), as.signIn(t, "carol")
	for _, tt := range []struct {
		name  string
		p     *person
		api   *apiClient
		sees  bool
		start int
	}{
		{"ann in ops", ann, as.token(t, "ann"), true, http.StatusSeeOther},
		{"bob outside", bob, as.token(t, "bob"), false, http.StatusNotFound},
		{"carol, staff", carol, as.token(t, "carol"), true, http.StatusSeeOther},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, home := tt.p.get("/")
			if strings.Contains(home, `value="deploy"`) != tt.sees || !strings.Contains(home, `value="open"`) {
				t.Errorf("the picker shows deploy: %v, want %v", !tt.sees, tt.sees)
			}
			var agents api.AgentList
			tt.api.json("GET", "/api/v1/agents", nil, 200, &agents)
			seen := false
			for _, a := range agents.Agents {
				seen = seen || a.Name == "deploy"
			}
			if seen != tt.sees {
				t.Errorf("GET /api/v1/agents lists deploy: %v, want %v", seen, tt.sees)
			}
			code, body, _ := tt.p.do(http.MethodPost, "/conversations", url.Values{"agent": {"deploy"}, "text": {"Roll out 1432"}}, nil)
			if code != tt.start {
				t.Fatalf("start with deploy = %d, want %d", code, tt.start)
			}
			if code == http.StatusNotFound && (!strings.Contains(body, `There is no agent &#34;deploy&#34;`) || !strings.Contains(body, "Roll out 1432")) {
				t.Errorf("the refused start does not say so, keeping the message: %s", body)
			}
			want := map[int]int{http.StatusSeeOther: http.StatusCreated, http.StatusNotFound: http.StatusNotFound}[tt.start]
			if st, b, _ := tt.api.do("POST", "/api/v1/conversations", api.NewConversation{Agent: "deploy", Text: "Roll out 1433"}); st != want {
				t.Errorf("API start with deploy = %d %s, want %d", st, b, want)
			}
		})
	}
	// Bob's refusals are in the audit log; nobody's conversation with deploy is his.
	entries, _ := as.db.AuditLog(context.Background(), 0, 20)
	refusals := 0
	for _, e := range entries {
		if e.Action == "access refused" && e.Actor == "bob" && strings.Contains(e.Detail, "agent deploy") {
			refusals++
		}
	}
	if refusals != 2 {
		t.Errorf("%d refusals of bob audited, want the page's and the API's", refusals)
	}
	u, _, _ := as.db.UserByName(context.Background(), "bob")
	if list, _, _ := as.db.ListConversations(context.Background(), domain.ConversationFilter{UserID: u.ID}); len(list) != 0 {
		t.Errorf("bob has %d conversations", len(list))
	}
}

// Many people start at once, some allowed, some not: each gets their own answer.
func TestAgentAccess_ManyAtOnce(t *testing.T) {
	as := newAccessServer(t, storetest.Path(t))
	clients := map[string]*apiClient{"ann": as.token(t, "ann"), "bob": as.token(t, "bob"), "carol": as.token(t, "carol")}
	var wg sync.WaitGroup
	for who, c := range clients {
		for i := range 5 {
			wg.Go(func() {
				want := http.StatusCreated
				if who == "bob" {
					want = http.StatusNotFound
				}
				if st, b, _ := c.do("POST", "/api/v1/conversations", api.NewConversation{Agent: "deploy", Text: fmt.Sprintf("deploy %s %d", who, i)}); st != want {
					t.Errorf("%s's start %d = %d %s, want %d", who, i, st, b, want)
				}
			})
		}
	}
	wg.Wait()
	list, _, _ := as.db.ListConversations(context.Background(), domain.ConversationFilter{Agent: "deploy"})
	if len(list) != 10 {
		t.Errorf("%d conversations with deploy, want ann's and carol's 10", len(list))
	}
}

// pageStream follows a page's stream and hands over its lines.
func pageStream(t *testing.T, p *person, path string) (<-chan string, <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	resp, err := p.client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream %s = %v, %v", path, resp, err)
	}
	lines, ended := make(chan string, 4096), make(chan struct{})
	go func() {
		defer resp.Body.Close()
		defer close(ended)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, ended
}

func TestAgentAccess_LosingItMakesTheConversationReadOnly(t *testing.T) {
	path := storetest.Path(t)
	as := newAccessServer(t, path)
	ann := as.signIn(t, "ann")
	api := as.token(t, "ann")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"deploy"}, "text": {"Roll out 1432"}}, nil)
	conv := h.Get("Location")
	id := convID(t, conv)
	as.waitState(t, id, domain.StateWaiting)
	_, stateBefore := ann.get(conv)
	if !strings.Contains(stateBefore, `id="composer" class="composer"`) {
		t.Fatal("ann's page has no message box while she may use deploy")
	}
	lines, ended := pageStream(t, ann, conv+"/stream")
	// Ann leaves ops, in "another process" (parley group remove on the same file).
	other := command(t, path)
	if err := other.RemoveFromGroup(context.Background(), "ops", []string{"ann"}, "cli"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("ann's stream went on after she lost the agent")
	}
	drain(lines)
	code, page := ann.get(conv)
	why := "You may no longer use Scripted deploy, so this conversation is read-only"
	if code != 200 || !strings.Contains(page, why) || strings.Contains(page, `class="composer"`) {
		t.Fatalf("ann's page after = %d; want it readable, read-only, saying why", code)
	}
	// Its reconnected stream puts the same note where the message box was.
	lines, _ = pageStream(t, ann, conv+"/stream")
	webtest.WaitLine(t, lines, why)
	// Nothing new starts, by any route...
	for _, r := range []struct{ method, path string }{{"POST", conv + "/messages"}, {"POST", conv + "/retry"}, {"POST", conv + "/regenerate"}} {
		if code, body, _ := ann.do(http.MethodPost, r.path, url.Values{"text": {"again"}}, nil); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
			t.Errorf("%s %s = %d", r.method, r.path, code)
		}
	}
	if st, b, _ := api.do("POST", fmt.Sprintf("/api/v1/conversations/%d/messages", id), map[string]string{"text": "again"}); st != http.StatusForbidden {
		t.Errorf("API message = %d %s", st, b)
	}
	// ...but her question is still hers to answer, and the agent takes the answer.
	q := pendingQuestionOf(t, as, id)
	if code, body, _ := ann.do(http.MethodPost, fmt.Sprintf("/questions/%d/answer", q), url.Values{"venue": {"the depot"}}, nil); code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	as.waitState(t, id, domain.StateDone)
	entries, _ := as.db.AuditLog(context.Background(), id, 20)
	if len(entries) == 0 || entries[0].Action != "access refused" {
		t.Errorf("the conversation's audit log = %+v, want its refusals", entries)
	}
}

// A change of access ends the streams it concerns before any event committed after it
// reaches them, though another process (parley user on the same file) made it.
func TestAgentAccess_NoEventAfterTheChange(t *testing.T) {
	path := storetest.Path(t)
	as := newAccessServer(t, path)
	ann, carol := as.signIn(t, "ann"), as.signIn(t, "carol")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"open"}, "text": {"Plan the offsite"}}, nil)
	conv := h.Get("Location")
	id := convID(t, conv)
	as.waitState(t, id, domain.StateWaiting)
	lines, ended := pageStream(t, carol, conv+"/stream")
	webtest.WaitLine(t, lines, "Which venue?")
	other := command(t, path)
	if _, err := other.SetRole(context.Background(), "carol", domain.RoleUser, "cli"); err != nil {
		t.Fatal(err)
	}
	// At once, before the server's own check of its streams comes round: ann answers.
	q := pendingQuestionOf(t, as, id)
	if code, body, _ := ann.do(http.MethodPost, fmt.Sprintf("/questions/%d/answer", q), url.Values{"venue": {"The secret venue"}}, nil); code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("carol's stream went on after her demotion")
	}
	for l := range drain(lines) {
		if strings.Contains(l, "The secret venue") {
			t.Fatalf("carol's stream got an event after her demotion: %s", l)
		}
	}
}

// pendingQuestionOf is the question the conversation waits on.
func pendingQuestionOf(t *testing.T, as *accountsServer, convID int64) int64 {
	t.Helper()
	ids, err := as.db.PendingQuestions(context.Background(), convID)
	if err != nil || len(ids) == 0 {
		t.Fatalf("pending questions of %d: %v, %v", convID, ids, err)
	}
	return ids[0]
}

// drain is what is left of a stream that ended.
func drain(lines <-chan string) map[string]bool {
	out := map[string]bool{}
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return out
			}
			out[l] = true
		default:
			return out
		}
	}
}

// command opens the database at path as `parley user` and `parley group` do beside a
// running server: shared, through SQLite's own locking.
func command(t *testing.T, path string) *store.DB {
	t.Helper()
	if storetest.Postgres() {
		return storetest.Open(t, path)
	}
	db, err := store.OpenWith(context.Background(), path, store.Options{Holder: "parley group", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A sign-in proxy's groups header syncs the person's groups as a provider's claim does:
// comma-separated or a line each (oauth2-proxy), joined and left as it changes, and with
// them the agents they may use.
func TestProxyGroupsHeader(t *testing.T) {
	auth := web.AuthOptions{Mode: web.AuthProxy, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, ProxyGroupsHeader: "X-Forwarded-Groups"}
	as := newAccountsServerOn(t, storetest.Path(t), web.NewServerOptions{Heartbeat: time.Hour, Auth: auth}, accessPolicies, accessAgents()...)
	get := func(groups ...string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, as.URL+"/", nil)
		req.Header.Set("Remote-User", "dana")
		for _, g := range groups {
			req.Header.Add("X-Forwarded-Groups", g)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	dana := func() []string {
		u, _, err := as.db.UserByName(context.Background(), "dana")
		if err != nil {
			t.Fatal(err)
		}
		return memberOf(t, as.db, u.ID)
	}
	if page := get("ops, dev"); !strings.Contains(page, `value="deploy"`) || !slices.Equal(dana(), []string{"dev", "ops"}) {
		t.Fatalf("with ops and dev: groups %q, deploy offered %v", dana(), strings.Contains(page, `value="deploy"`))
	}
	if page := get("dev", "/data science"); strings.Contains(page, `value="deploy"`) || !slices.Equal(dana(), []string{"data-science", "dev"}) {
		t.Fatalf("after leaving ops: groups %q, deploy offered %v", dana(), strings.Contains(page, `value="deploy"`))
	}
	g, err := as.db.Group(context.Background(), "dev")
	if err != nil || g.Source != domain.SourceProxy {
		t.Errorf("dev comes from %q, %v; want the proxy", g.Source, err)
	}
	if get(); len(dana()) != 0 {
		t.Errorf("no groups header: still in %q", dana())
	}
}

// A message queued while the person could use the agent does not start new work once they
// cannot: the run says why, and the agent is not run on it.
func TestAgentAccess_AQueuedMessageAfterTheAgentWasLost(t *testing.T) {
	release := make(chan struct{})
	slow := &scripted{name: "deploy", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if err := out.Text("Working on it. "); err != nil {
			return err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return out.Text("Done.")
	}}
	as := newAccountsServerOn(t, storetest.Path(t), web.NewServerOptions{Heartbeat: time.Hour}, accessPolicies, slow)
	ctx := context.Background()
	if _, err := as.db.AddToGroup(ctx, "ops", []string{"ann"}, domain.RoleMember, "carol"); err != nil {
		t.Fatal(err)
	}
	ann := as.signIn(t, "ann")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"deploy"}, "text": {"Roll out 1432"}}, nil)
	conv := h.Get("Location")
	id := convID(t, conv)
	// The agent is at work (its access checked) before ann's access goes.
	waitFor(t, "the agent to start on the first message", func() bool { return len(slow.triggers()) == 1 })
	if code, body, _ := ann.do(http.MethodPost, conv+"/messages", url.Values{"text": {"And then 1433"}}, nil); code != 200 {
		t.Fatalf("queue a message = %d %s", code, body)
	}
	if q, _ := as.db.Queued(ctx, id); len(q) != 1 {
		t.Fatalf("%d messages queued", len(q))
	}
	if err := as.db.RemoveFromGroup(ctx, "ops", []string{"ann"}, "carol"); err != nil {
		t.Fatal(err)
	}
	close(release)
	as.waitState(t, id, domain.StateFailed)
	if n := len(slow.triggers()); n != 1 {
		t.Errorf("the agent ran %d steps, want the first alone", n)
	}
	c, _ := as.db.Conversation(ctx, id)
	evs, _ := as.db.Events(ctx, id, 0)
	why := ""
	for _, ev := range evs {
		if ev.Kind == domain.EventRunState && ev.State == domain.StateFailed {
			why = ev.Error
		}
	}
	if c.State != domain.StateFailed || !strings.Contains(why, "You may no longer use Scripted deploy") {
		t.Errorf("the queued message's run: %s, %q", c.State, why)
	}
}
