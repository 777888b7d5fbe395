package web_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

var lastResolution = webtest.LastResolution

func intp(n int) *int           { return &n }
func floatp(f float64) *float64 { return &f }

var askerQuestion = webtest.AskerQuestion

func askerAgent(q func() domain.Question) *scripted {
	return &scripted{name: "asker", step: webtest.AskerStep(q)}
}

func convID(t testing.TB, path string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(strings.TrimPrefix(path, "/c/"), 10, 64)
	if err != nil {
		t.Fatalf("conversation path %q", path)
	}
	return id
}

func TestQuestionFlow(t *testing.T) {
	a := askerAgent(askerQuestion)
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "asker", "Help me plan")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)

	code, page := ts.get(t, path)
	if code != 200 || !strings.Contains(page, "Help me plan") || !strings.Contains(page, `<label for="q1-name">`) {
		t.Fatalf("page = %d, want the message and the form with labelled fields", code)
	}

	t.Run("invalid answer keeps values and stores nothing", func(t *testing.T) {
		code, body, _ := ts.post(t, "/questions/1/answer", url.Values{"name": {"ab"}, "count": {"11"}, "color": {"blue"}})
		if code != 422 {
			t.Fatalf("status %d", code)
		}
		for _, want := range []string{"at least 3", "between 1 and 10", `value="ab"`, `value="11"`, `<option value="blue" selected>`, `aria-invalid="true"`} {
			if !strings.Contains(body, want) {
				t.Errorf("response lacks %q:\n%s", want, body)
			}
		}
		rec, _ := ts.db.Question(context.Background(), 1)
		if !rec.Pending() {
			t.Fatal("an invalid answer was stored")
		}
	})

	t.Run("valid answer, then a double submit", func(t *testing.T) {
		form := url.Values{"name": {"Apollo"}, "count": {"7"}}
		for i, want := range []int{200, 409} {
			code, body, _ := ts.post(t, "/questions/1/answer", form)
			if code != want || !strings.Contains(body, "Answered") || !strings.Contains(body, "Apollo") {
				t.Fatalf("submit %d: %d %s", i, code, body)
			}
		}
		ts.waitState(t, id, domain.StateDone)
		if got := a.triggers(); len(got) != 2 || got[1] != domain.TriggerResume {
			t.Fatalf("agent steps = %v, want [message resume]: one resume for two submits", got)
		}
		rec, _ := ts.db.Question(context.Background(), 1)
		if rec.Resolution.Values["count"] != float64(7) || rec.Resolution.By != web.NoneUser {
			t.Fatalf("stored resolution = %+v", rec.Resolution)
		}
	})

	t.Run("the stream replays the whole conversation with event ids", func(t *testing.T) {
		evs := ts.readSSE(t, path+"/stream?after=0", "", containing("Outcome answered, name Apollo"))
		var last int64
		var sawAppend, sawForm, sawResolved bool
		for _, ev := range evs {
			if ev.ID != "" {
				n, _ := strconv.ParseInt(ev.ID, 10, 64)
				if n <= last {
					t.Fatalf("event ids not increasing: %d after %d", n, last)
				}
				last = n
			}
			d := ev.data()
			sawAppend = sawAppend || strings.Contains(d, "mode append") && strings.Contains(d, "ask you something")
			sawForm = sawForm || strings.Contains(d, `id="q-1"`) && strings.Contains(d, "Submit")
			sawResolved = sawResolved || strings.Contains(d, "selector #q-1") && strings.Contains(d, "Answered")
		}
		if !sawAppend || !sawForm || !sawResolved {
			t.Fatalf("append=%v form=%v resolved=%v in %v", sawAppend, sawForm, sawResolved, evs)
		}
	})
}

func TestStream_CatchUpFromLastEventID(t *testing.T) {
	a := askerAgent(askerQuestion)
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "asker", "hello")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)

	all := ts.readSSE(t, path+"/stream?after=0", "", containing(`id="q-1"`))
	var ids []string
	for _, ev := range all {
		if ev.ID != "" {
			ids = append(ids, ev.ID)
		}
	}
	if len(ids) < 3 {
		t.Fatalf("want several ids, got %v", ids)
	}
	// Reconnect in the middle: the client sends its last id; the query's "after" is ignored.
	mid := ids[1]
	rest := ts.readSSE(t, path+"/stream?after=0", mid, containing(`id="q-1"`))
	var got []string
	for _, ev := range rest {
		if ev.ID != "" {
			got = append(got, ev.ID)
		}
	}
	if strings.Join(got, ",") != strings.Join(ids[2:], ",") {
		t.Fatalf("after reconnect at %s got ids %v, want %v: each event exactly once", mid, got, ids[2:])
	}
}

func TestMarkdownIsSanitizedOnTheStream(t *testing.T) {
	evil := &scripted{name: "evil", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		return out.Text(`**bold** <img src=x onerror="alert(1)"> <div data-on:click="@post('/x')">hi</div> [x](javascript:alert(1))`)
	}}
	ts := newTestServer(t, newDB(t), evil)
	path := ts.start(t, "evil", "go")
	ts.waitState(t, convID(t, path), domain.StateDone)
	evs := ts.readSSE(t, path+"/stream?after=0", "", containing("<strong>bold</strong>"))
	for _, ev := range evs {
		d := ev.data()
		// The agent's attribute, not the page's own (its reply's rating toggles post too).
		for _, bad := range []string{`onerror="`, `data-on:click="@post('/x')`, `@post(&#39;/x&#39;)`, `href="javascript`} {
			if strings.Contains(d, bad) {
				t.Errorf("stream carries %q: %s", bad, d)
			}
		}
	}
	_, page := ts.get(t, path)
	if strings.Contains(page, `onerror="`) || strings.Contains(page, `data-on:click="@post('/x')"`) {
		t.Error("the page carries agent markup that would run")
	}
}

func TestFailedAgentOffersRetry(t *testing.T) {
	fails := true
	flaky := &scripted{name: "flaky", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		out.Text("Working on it")
		if fails {
			fails = false
			return errors.New("model endpoint refused the connection")
		}
		return out.Text("Done now.")
	}}
	ts := newTestServer(t, newDB(t), flaky)
	path := ts.start(t, "flaky", "go")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateFailed)
	_, page := ts.get(t, path)
	for _, want := range []string{"model endpoint refused the connection", ">Retry</button>", "Working on it"} {
		if !strings.Contains(page, want) {
			t.Errorf("failed page lacks %q", want)
		}
	}
	if code, _, _ := ts.post(t, path+"/retry", nil); code != http.StatusNoContent {
		t.Fatalf("retry = %d", code)
	}
	ts.waitState(t, id, domain.StateDone)
	_, page = ts.get(t, path)
	if !strings.Contains(page, "Done now.") || !strings.Contains(page, "model endpoint refused") {
		t.Error("after retry the page must show the new answer and keep the earlier error")
	}
}

func TestDeadlineExpiresAndResumes(t *testing.T) {
	a := askerAgent(func() domain.Question {
		q := askerQuestion()
		q.Deadline = time.Now().Add(150 * time.Millisecond)
		return q
	})
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "asker", "hello")
	ts.waitState(t, convID(t, path), domain.StateDone)
	rec, _ := ts.db.Question(context.Background(), 1)
	if rec.Pending() || rec.Resolution.Outcome != domain.Expired {
		t.Fatalf("question = %+v, want expired", rec.Resolution)
	}
	_, page := ts.get(t, path)
	if !strings.Contains(page, "Outcome expired") {
		t.Error("the agent did not resume with the expired outcome")
	}
}

func TestSecretFieldsAreNeverRendered(t *testing.T) {
	a := askerAgent(func() domain.Question {
		return domain.Question{Message: "I need your credentials", Fields: []domain.Field{
			{Name: "api_token", Kind: domain.KindText, Required: true},
			{Name: "password", Kind: "password"},
		}}
	})
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "asker", "deploy it")
	ts.waitState(t, convID(t, path), domain.StateDone)
	_, page := ts.get(t, path)
	if strings.Contains(page, `name="api_token"`) || strings.Contains(page, `name="password"`) {
		t.Fatal("a secret field was rendered")
	}
	if !strings.Contains(page, "did not show the field") {
		t.Error("the person is not told why")
	}
	if !strings.Contains(page, "Outcome declined") || !strings.Contains(page, "api_token") {
		t.Error("the agent did not receive a decline naming the field")
	}
}

func TestDeclineAndCancel(t *testing.T) {
	a := askerAgent(func() domain.Question { q := askerQuestion(); q.AllowCancel = true; return q })
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "asker", "hello")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	_, page := ts.get(t, path)
	if !strings.Contains(page, ">Cancel</button>") || !strings.Contains(page, ">Decline</button>") {
		t.Fatal("form lacks Decline or Cancel")
	}
	code, body, _ := ts.post(t, "/questions/1/decline", url.Values{"_reason": {"Not now"}, "name": {""}})
	if code != 200 || !strings.Contains(body, "Declined") {
		t.Fatalf("decline = %d %s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	_, page = ts.get(t, path)
	if !strings.Contains(page, `reason &#34;Not now&#34;`) && !strings.Contains(page, `reason "Not now"`) {
		t.Error("the agent did not get the decline reason")
	}
}

func TestRestartKeepsPendingQuestionAnswerable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	db := storetest.Open(t, path)
	a := askerAgent(askerQuestion)
	ts := newTestServer(t, db, a)
	p := ts.start(t, "asker", "hello")
	id := convID(t, p)
	ts.waitState(t, id, domain.StateWaiting)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.srv.Shutdown(ctx)
	ts.Close()
	db.Close()

	b := askerAgent(askerQuestion)
	ts2 := newTestServer(t, storetest.Open(t, path), b)
	_, page := ts2.get(t, p)
	if !strings.Contains(page, `<label for="q1-name">`) {
		t.Fatal("after restart the form is gone")
	}
	if code, body, _ := ts2.post(t, "/questions/1/answer", url.Values{"name": {"Gemini"}, "count": {"3"}}); code != 200 || !strings.Contains(body, "Answered") {
		t.Fatalf("answer after restart = %d %s", code, body)
	}
	ts2.waitState(t, id, domain.StateDone)
	_, page = ts2.get(t, p)
	if !strings.Contains(page, "name Gemini") {
		t.Error("the agent did not finish with the answer after restart")
	}
}

func TestRoutes(t *testing.T) {
	ts := newTestServer(t, newDB(t), askerAgent(askerQuestion))
	ts.start(t, "asker", "first")
	tests := []struct {
		name, method, path string
		form               url.Values
		wantStatus         int
		wantContains       string
	}{
		{"health", "GET", "/healthz", nil, 200, "ok"},
		{"home lists conversations", "GET", "/", nil, 200, "first"},
		{"home offers agents", "GET", "/", nil, 200, "Scripted asker"},
		{"datastar client", "GET", "/static/datastar.js", nil, 200, "datastar"},
		{"missing conversation", "GET", "/c/999", nil, 404, "not found"},
		{"bad id", "GET", "/c/abc", nil, 404, ""},
		{"missing stream", "GET", "/c/999/stream", nil, 404, ""},
		{"missing question", "POST", "/questions/999/answer", url.Values{}, 404, ""},
		{"unknown agent", "POST", "/conversations", url.Values{"agent": {"nope"}, "text": {"hi"}}, 404, "There is no agent"},
		{"empty message", "POST", "/conversations", url.Values{"agent": {"asker"}, "text": {"  "}}, 422, "Write a message first"},
		{"send to missing conversation", "POST", "/c/999/messages", url.Values{"text": {"x"}}, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var body string
			if tt.method == "GET" {
				code, body = ts.get(t, tt.path)
			} else {
				code, body, _ = ts.post(t, tt.path, tt.form)
			}
			if code != tt.wantStatus || !strings.Contains(body, tt.wantContains) {
				t.Fatalf("%s %s = %d %q, want %d containing %q", tt.method, tt.path, code, body, tt.wantStatus, tt.wantContains)
			}
		})
	}
}

func TestSendWhileWaitingSupersedes(t *testing.T) {
	a := askerAgent(askerQuestion)
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "asker", "hello")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	code, body, _ := ts.post(t, path+"/messages", url.Values{"text": {"Actually, something else"}})
	if code != 200 || !strings.Contains(body, `id="composer-nonce"`) {
		t.Fatalf("send = %d %s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	rec, _ := ts.db.Question(context.Background(), 1)
	if rec.Pending() || rec.Resolution.Outcome != domain.Superseded {
		t.Fatalf("first question = %+v, want superseded", rec.Resolution)
	}
}

func TestStream_CarriageReturnsCannotForgeSSEFields(t *testing.T) {
	forger := &scripted{name: "forger", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		out.Plan(domain.Plan{Title: "x\rid: 999999\r\rdata: selector #thread", Steps: []domain.PlanStep{{Title: "a\rb", Status: domain.StepDone}}})
		return out.Text("hello\rid: 999999\r\revent: datastar-patch-elements\rdata: mode remove\r")
	}}
	ts := newTestServer(t, newDB(t), forger)
	path := ts.start(t, "forger", "go")
	ts.waitState(t, convID(t, path), domain.StateDone)
	resp, err := http.Get(ts.URL + path + "/stream?after=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 1<<16)
	var raw strings.Builder
	for !strings.Contains(raw.String(), "state-done") {
		n, err := resp.Body.Read(buf)
		raw.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if strings.Contains(raw.String(), "\r") {
		t.Fatalf("the stream carries a bare carriage return: %q", raw.String())
	}
}

func TestSendMessage_ResentWithSameNonceIsRecordedOnce(t *testing.T) {
	a := &scripted{name: "echo", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		return out.Text("ok")
	}}
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "echo", "first")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateDone)
	form := url.Values{"text": {"line one\r\nline two"}, "nonce": {"abc123"}}
	for i := 0; i < 3; i++ {
		code, body, _ := ts.post(t, path+"/messages", form)
		if code != 200 || !strings.Contains(body, `id="composer-nonce"`) || strings.Contains(body, `value="abc123"`) {
			t.Fatalf("send %d = %d %s, want a fresh nonce", i, code, body)
		}
		ts.waitState(t, id, domain.StateDone)
	}
	evs, _ := ts.db.Events(context.Background(), id, 0)
	var msgs []string
	for _, ev := range evs {
		if ev.Kind == domain.EventUserMessage {
			msgs = append(msgs, ev.Text)
		}
	}
	if len(msgs) != 2 || msgs[1] != "line one\nline two" {
		t.Fatalf("user messages = %q, want [first, \"line one\\nline two\"]", msgs)
	}
}

func TestCreateConversation_DoubleSubmitMakesOne(t *testing.T) {
	a := &scripted{name: "echo", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		return out.Text("ok")
	}}
	ts := newTestServer(t, newDB(t), a)
	form := url.Values{"agent": {"echo"}, "text": {"hello"}, "nonce": {"start-1"}}
	_, _, h1 := ts.post(t, "/conversations", form)
	_, _, h2 := ts.post(t, "/conversations", form)
	if h1.Get("Location") != h2.Get("Location") {
		t.Fatalf("two conversations: %s and %s", h1.Get("Location"), h2.Get("Location"))
	}
	id := convID(t, h1.Get("Location"))
	ts.waitState(t, id, domain.StateDone)
	list, _, _ := ts.db.ListConversations(context.Background(), domain.ConversationFilter{Limit: 10})
	evs, _ := ts.db.Events(context.Background(), id, 0)
	users := 0
	for _, ev := range evs {
		if ev.Kind == domain.EventUserMessage {
			users++
		}
	}
	if len(list) != 1 || users != 1 {
		t.Fatalf("%d conversations, %d user messages; want 1 and 1", len(list), users)
	}
}

func TestSendMessage_Errors(t *testing.T) {
	a := askerAgent(askerQuestion)
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "asker", "hello")
	ts.waitState(t, convID(t, path), domain.StateWaiting)
	tests := []struct {
		name, text, want string
	}{
		{"empty", "   ", "Write a message first."},
		{"over the message limit", strings.Repeat("x", domain.MaxMessageBytes+1), "too long"},
		{"over the body limit", strings.Repeat("y", 5<<20), "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := ts.post(t, path+"/messages", url.Values{"text": {tt.text}})
			if code != 200 || !strings.Contains(body, tt.want) || !strings.Contains(body, "selector #composer-error") && !strings.Contains(body, `id="composer-error"`) {
				t.Fatalf("= %d %.300s, want the error %q patched alone", code, body, tt.want)
			}
			if strings.Contains(body, `id="message"`) {
				t.Fatal("the message box was replaced: what was typed would be lost")
			}
		})
	}
	rec, _ := ts.db.Question(context.Background(), 1)
	if !rec.Pending() {
		t.Fatal("a rejected message superseded the pending question")
	}
}

func TestUserInputMetaDataMessages(t *testing.T) {
	form := `UserInputMetaData: {"require_user_input": true, "content": "I need a branch", "metadata": {"input_fields": [{"name": "branch_name", "type": "text", "required": true}, {"name": "github_token", "type": "password"}]}}`
	tests := []struct {
		name, text  string
		wantForm    bool
		wantShown   []string
		wantMissing []string
	}{
		{"bad JSON stays plain text", "UserInputMetaData: {\"require_user_input\": tru", false, []string{"UserInputMetaData: {&#34;require_user_input&#34;: tru"}, nil},
		{"text after the form is kept", form + "\n\nI will wait for your answer.", true, []string{"I will wait for your answer.", "I need a branch"}, []string{"require_user_input"}},
		{"text before the form is kept", "Sure thing.\n\n" + form, true, []string{"Sure thing.", "I need a branch"}, []string{"require_user_input"}},
		{"lower-case prefix", "userinputmetadata: " + form[len("UserInputMetaData: "):], true, []string{"I need a branch"}, []string{"require_user_input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &scripted{name: "pe", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
				if r := lastResolution(in); r != nil {
					return out.Text(fmt.Sprintf("Got %v; note: %s", r.Values["branch_name"], r.Reason))
				}
				for _, w := range strings.SplitAfter(tt.text, " ") {
					if err := out.Text(w); err != nil {
						return err
					}
				}
				return nil
			}}
			ts := newTestServer(t, newDB(t), a)
			path := ts.start(t, "pe", "open a PR")
			id := convID(t, path)
			want := domain.StateDone
			if tt.wantForm {
				want = domain.StateWaiting
			}
			ts.waitState(t, id, want)
			_, page := ts.get(t, path)
			for _, s := range tt.wantShown {
				if !strings.Contains(page, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range tt.wantMissing {
				if strings.Contains(page, s) {
					t.Errorf("page shows %q", s)
				}
			}
			if !tt.wantForm {
				return
			}
			if strings.Contains(page, `name="github_token"`) || !strings.Contains(page, `name="branch_name"`) {
				t.Fatal("want branch_name shown and github_token refused")
			}
			ts.post(t, "/questions/1/answer", url.Values{"branch_name": {"feature/x"}})
			ts.waitState(t, id, domain.StateDone)
			_, page = ts.get(t, path)
			if !strings.Contains(page, "Got feature/x; note:") || !strings.Contains(page, "github_token") {
				t.Error("the agent did not get the answer with the reason the token field was declined")
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Run("where the agent allows it", func(t *testing.T) {
		a := askerAgent(func() domain.Question { q := askerQuestion(); q.AllowCancel = true; return q })
		ts := newTestServer(t, newDB(t), a)
		path := ts.start(t, "asker", "hello")
		id := convID(t, path)
		ts.waitState(t, id, domain.StateWaiting)
		code, body, _ := ts.post(t, "/questions/1/cancel", url.Values{})
		if code != 200 || !strings.Contains(body, "Cancelled") {
			t.Fatalf("cancel = %d %s", code, body)
		}
		ts.waitState(t, id, domain.StateDone)
		_, page := ts.get(t, path)
		if !strings.Contains(page, "Outcome cancelled") {
			t.Error("the agent did not resume with the cancel")
		}
	})
	t.Run("refused where it does not", func(t *testing.T) {
		ts := newTestServer(t, newDB(t), askerAgent(askerQuestion))
		path := ts.start(t, "asker", "hello")
		ts.waitState(t, convID(t, path), domain.StateWaiting)
		code, body, _ := ts.post(t, "/questions/1/cancel", url.Values{})
		if code != 422 || !strings.Contains(body, "does not allow cancelling") {
			t.Fatalf("cancel = %d %s", code, body)
		}
		if rec, _ := ts.db.Question(context.Background(), 1); !rec.Pending() {
			t.Fatal("the question was resolved")
		}
	})
}

// remote is a scripted agent whose work goes on elsewhere: it reattaches after a restart.
type remote struct{ *scripted }

func (remote) Reattaches() bool { return true }

func TestReattachAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	started := make(chan struct{})
	hang := remote{&scripted{name: "remote", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		out.Text("Working on the remote task")
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}}}
	db := storetest.Open(t, path)
	ts := newTestServer(t, db, hang)
	p := ts.start(t, "remote", "go")
	id := convID(t, p)
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.srv.Shutdown(ctx)
	ts.Close()
	if c, _ := db.Conversation(ctx, id); c.State != domain.StateInterrupted {
		t.Fatalf("state after shutdown = %q, want interrupted", c.State)
	}
	db.Close()

	caughtUp := remote{&scripted{name: "remote", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		return out.Text("Caught up: the remote task finished.")
	}}}
	ts2 := newTestServer(t, storetest.Open(t, path), caughtUp)
	ts2.waitState(t, id, domain.StateDone)
	if got := caughtUp.triggers(); len(got) != 1 || got[0] != domain.TriggerRetry {
		t.Fatalf("after restart the agent ran %v, want one retry", got)
	}
}
