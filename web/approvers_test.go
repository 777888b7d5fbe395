package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/notify"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
)

// deployer asks its approval gate (a tool call to approve, as a model-backed agent's
// approve_tools does) before it deploys, then says how it went.
func deployer() *scripted {
	return &scripted{name: "deployer", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if r := lastResolution(in); r != nil && in.Trigger == domain.TriggerResume {
			if r.Outcome == domain.Answered {
				return out.Text(fmt.Sprintf("Deployed build %v, approved by %s.", r.Values["build"], r.By))
			}
			return out.Text(fmt.Sprintf("Not deployed (%s): %s", r.Outcome, r.Reason))
		}
		_, err := out.Ask(domain.Question{Message: "Run the tool **rollout** of the tool server **k8s**?", Type: domain.RequestApproval, Gate: true,
			SubmitLabel: "Approve and run", DeclineLabel: "Reject",
			Fields: []domain.Field{{Name: "build", Label: "Build", Kind: domain.KindText, Required: true, Default: "1432"}}})
		return err
	}}
}

// hook is a webhook channel's receiver on 127.0.0.1: what it was sent.
type hook struct {
	*httptest.Server
	mu   sync.Mutex
	got  []string
	hits chan struct{}
}

func newHook(t *testing.T) *hook {
	h := &hook{hits: make(chan struct{}, 16)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, string(b))
		h.mu.Unlock()
		h.hits <- struct{}{}
	}))
	t.Cleanup(h.Close)
	return h
}

func TestApprovers_TwoOfTheGroupApproveWhatAnotherAsked(t *testing.T) {
	path := storetest.Path(t)
	policies := map[string]domain.Policy{"deployer": {Access: domain.Access{"group:ops", "person:ann"}, Approvers: domain.Audience{Group: "ops"}, Approvals: 2}}
	as := newAccountsServerOn(t, path, web.NewServerOptions{Heartbeat: time.Hour, Auth: web.AuthOptions{StaffAnswer: true},
		Notify: web.NotifyOptions{Networks: notify.Networks{netip.MustParsePrefix("127.0.0.1/32")}}}, policies, deployer())
	ctx := context.Background()
	for _, n := range []string{"cy", "dee"} {
		if _, err := as.db.CreateUser(ctx, n, "", domain.RoleUser); err != nil {
			t.Fatal(err)
		}
	}
	// ann asks, and is in ops herself: she still does not approve her own request.
	if _, err := as.db.AddToGroup(ctx, "ops", []string{"ann", "bob", "cy", "dee"}, domain.RoleMember, "carol"); err != nil {
		t.Fatal(err)
	}
	hk := newHook(t)
	g, _ := as.db.Group(ctx, "ops")
	if _, err := as.db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelWebhook, Target: hk.URL + "/ops", GroupID: g.ID}, "carol"); err != nil {
		t.Fatal(err)
	}
	ann, bob, carol := as.signIn(t, "ann"), as.signIn(t, "bob"), as.signIn(t, "carol")
	cy, dee, annAPI := as.token(t, "cy"), as.token(t, "dee"), as.token(t, "ann")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"deployer"}, "text": {"Deploy build 1432 to production"}}, nil)
	conv := h.Get("Location")
	id := convID(t, conv)
	as.waitState(t, id, domain.StateWaiting)
	q := pendingQuestionOf(t, as, id)
	qpath := fmt.Sprintf("/questions/%d", q)

	// The group's channel hears of it, and the Inbox of each member but ann holds it.
	select {
	case <-hk.hits:
	case <-time.After(20 * time.Second):
		t.Fatal("the group's webhook was not told")
	}
	if !strings.Contains(hk.got[0], qpath) || !strings.Contains(hk.got[0], "Scripted deployer, for ann, asks the group ops: Run the tool rollout of the tool server k8s?") {
		t.Errorf("the webhook got %q, want who asks whom, and the question's link", hk.got[0])
	}
	for who, c := range map[string]*apiClient{"ann": annAPI, "cy": cy} {
		var inbox struct{ Questions []map[string]any }
		c.json("GET", "/api/v1/questions", nil, 200, &inbox)
		if n := len(inbox.Questions); who == "ann" && n != 0 || who == "cy" && n != 1 {
			t.Errorf("%s's Inbox holds %d questions", who, n)
		}
	}
	// ann's page says whom it waits for; she cannot approve, by page or API.
	_, page := ann.get(conv)
	if !strings.Contains(page, "This approval was asked on your behalf: it waits for the group ops to approve.") || strings.Contains(page, "Approve and run") {
		t.Errorf("ann's page does not say whom her approval waits for, or offers her the form")
	}
	if !strings.Contains(page, "waiting on others") || !strings.Contains(page, "The agent is waiting for others to answer") || strings.Contains(page, "waiting for you") {
		t.Errorf("ann's sidebar and status line say it waits for her")
	}
	if code, body, _ := ann.do(http.MethodPost, qpath+"/answer", url.Values{"build": {"1432"}}, nil); code != http.StatusForbidden || !strings.Contains(body, "the group ops approves it, not you") {
		t.Errorf("ann approves her own request = %d %s", code, body)
	}
	if st, _, _ := annAPI.do("POST", "/api/v1"+qpath+"/answer", map[string]any{"values": map[string]any{"build": "1432"}}); st != http.StatusForbidden {
		t.Errorf("ann approves by the API = %d", st)
	}
	// Staff may answer for people here, but not for whom an approval is routed to.
	if code, _, _ := carol.do(http.MethodPost, qpath+"/answer", url.Values{"build": {"1432"}}, nil); code != http.StatusForbidden {
		t.Errorf("staff approve on someone's behalf = %d", code)
	}
	// bob reads the conversation that led to it on the question's page, and approves.
	code, page := bob.get(qpath)
	if code != 200 || !strings.Contains(page, "Deploy build 1432 to production") || !strings.Contains(page, "Approve and run") || !strings.Contains(page, "read-only") {
		t.Fatalf("bob's question page = %d: its context or its form is missing", code)
	}
	if code, body, _ := bob.do(http.MethodPost, qpath+"/answer", url.Values{"build": {"1432"}}, nil); code != 200 || !strings.Contains(body, "You approved. Waiting for 1 more of the group ops") {
		t.Fatalf("bob approves = %d %s", code, body)
	}
	if _, page = ann.get(conv); !strings.Contains(page, "Approved so far: bob (1 of 2)") {
		t.Errorf("ann's page does not say who approved so far")
	}
	// cy and dee approve at once: two approvals were needed, the question is answered once.
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for _, c := range []*apiClient{cy, dee} {
		wg.Go(func() {
			st, _, _ := c.do("POST", "/api/v1"+qpath+"/answer", map[string]any{"values": map[string]any{"build": "1432"}})
			codes <- st
		})
	}
	wg.Wait()
	close(codes)
	for st := range codes {
		if st != 200 && st != 409 {
			t.Errorf("an approval at once = %d", st)
		}
	}
	as.waitState(t, id, domain.StateDone)
	evs, _ := as.db.Events(ctx, id, 0)
	last := evs[len(evs)-1]
	for _, ev := range evs {
		if ev.Kind == domain.EventAgentMessage {
			last = ev
		}
	}
	if !strings.HasPrefix(last.Text, "Deployed build 1432, approved by bob, ") {
		t.Errorf("the agent's reply = %q", last.Text)
	}
	entries, _ := as.db.AuditLog(ctx, id, 20)
	routed := false
	for _, e := range entries {
		routed = routed || e.Action == "route approval" && strings.Contains(e.Detail, "to the group ops, 2 approvals")
	}
	if !routed {
		t.Errorf("the conversation's audit log lacks the routed approval: %+v", entries)
	}
	_, timeline := carol.get(conv + "/timeline")
	if !strings.Contains(timeline, "route approval") {
		t.Errorf("the timeline does not show the routed approval")
	}

	// Any rejection rejects: the agent is told why.
	ann.do(http.MethodPost, conv+"/messages", url.Values{"text": {"And build 1433"}}, nil)
	as.waitState(t, id, domain.StateWaiting)
	q = pendingQuestionOf(t, as, id)
	if st, b, _ := dee.do("POST", fmt.Sprintf("/api/v1/questions/%d/decline", q), map[string]any{"reason": "Not on a Friday."}); st != 200 {
		t.Fatalf("dee rejects = %d %s", st, b)
	}
	as.waitState(t, id, domain.StateDone)
	evs, _ = as.db.Events(ctx, id, 0)
	var reply string
	for _, ev := range evs {
		if ev.Kind == domain.EventAgentMessage {
			reply = ev.Text
		}
	}
	if reply != "Not deployed (declined): Not on a Friday." {
		t.Errorf("after a rejection the agent said %q", reply)
	}
}

// An approval that nobody but its asker could give is declined at once, saying why, and
// the agent is told: nothing waits for ever.
func TestApprovers_NobodyToApprove(t *testing.T) {
	policies := map[string]domain.Policy{"deployer": {Approvers: domain.Audience{Group: "ops"}, Approvals: 2}}
	as := newAccountsServerOn(t, storetest.Path(t), web.NewServerOptions{Heartbeat: time.Hour}, policies, deployer())
	if _, err := as.db.AddToGroup(context.Background(), "ops", []string{"ann", "bob"}, domain.RoleMember, "carol"); err != nil {
		t.Fatal(err)
	}
	ann := as.signIn(t, "ann")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"deployer"}, "text": {"Deploy"}}, nil)
	id := convID(t, h.Get("Location"))
	as.waitState(t, id, domain.StateDone)
	evs, _ := as.db.Events(context.Background(), id, 0)
	var reply string
	for _, ev := range evs {
		if ev.Kind == domain.EventAgentMessage {
			reply = ev.Text
		}
	}
	if !strings.Contains(reply, "It needs 2 approvals from the group ops, which has 1 members besides the person who asked.") {
		t.Errorf("the agent was told %q", reply)
	}
}

// The approver reads the conversation as it was when the approval was asked, in the
// version it was asked in: not what its owner wrote or showed since. Its owner opens the
// question's page too, and is told whom it waits for.
func TestApprovers_ReadWhatLedToIt(t *testing.T) {
	policies := map[string]domain.Policy{"deployer": {Approvers: domain.Audience{Person: "bob"}}}
	as := newAccountsServerOn(t, storetest.Path(t), web.NewServerOptions{Heartbeat: time.Hour}, policies, deployer())
	ann, bob := as.signIn(t, "ann"), as.signIn(t, "bob")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"deployer"}, "text": {"Deploy build 1432 to production"}}, nil)
	conv := h.Get("Location")
	id := convID(t, conv)
	as.waitState(t, id, domain.StateWaiting)
	first := pendingQuestionOf(t, as, id)
	evs, _ := as.db.Events(context.Background(), id, 0)
	msg := evs[0].ID
	if code, body, _ := ann.do(http.MethodPost, fmt.Sprintf("%s/messages/%d/edit", conv, msg), url.Values{"text": {"My private note, for nobody else"}}, nil); code != http.StatusNoContent {
		t.Fatalf("edit = %d %s", code, body)
	}
	var second int64
	waitFor(t, "the edited version's approval", func() bool {
		ids, _ := as.db.PendingQuestions(context.Background(), id)
		if len(ids) == 1 && ids[0] != first {
			second = ids[0]
		}
		return second != 0
	})
	code, page := bob.get(fmt.Sprintf("/questions/%d", first))
	if code != 200 || !strings.Contains(page, "Deploy build 1432 to production") || strings.Contains(page, "My private note") {
		t.Errorf("bob's page of the first approval = %d: want the message that led to it, not the edit after it", code)
	}
	// ann opens it too (a link passed on): no redirect to itself, and it is not hers to give.
	code, body, hdr := ann.do(http.MethodGet, fmt.Sprintf("/questions/%d", second), nil, nil)
	if code != 200 || !strings.Contains(body, "it waits for bob to approve") {
		t.Errorf("ann's question page = %d (to %q)", code, hdr.Get("Location"))
	}
}
