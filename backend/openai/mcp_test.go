package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
	"github.com/parley-chat/parley/toolserver/mcptest"
)

// demoTools starts the demo tool server over Streamable HTTP and a pool of it, named "demo",
// with the given changes to its settings.
func demoTools(t *testing.T, change ...func(*toolserver.ServerConfig)) *toolserver.Pool {
	t.Helper()
	cfg, _ := mcptest.HTTPDemo(t, "demo", nil)
	for _, f := range change {
		f(&cfg)
	}
	return mcptest.Pool(t, cfg)
}

func withTools(p *toolserver.Pool) func(*openai.Config) {
	return func(c *openai.Config) { c.Tools = p }
}

// toolCallsOf returns the tool call events of a step, as they were recorded.
func toolCallsOf(rec *recorder) []domain.ToolCall {
	var out []domain.ToolCall
	for _, ev := range rec.Events {
		if ev.Kind == domain.EventToolCall {
			out = append(out, *ev.ToolCall)
		}
	}
	return out
}

func TestAToolCallRunsAndItsResultReachesTheModel(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t,
		toolCalls("Let me look.", call{id: "c1", name: "demo__lookup", args: []string{`{"word":`, `"parley"}`}}),
		text("It has six letters."))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	rec := c.MustSend("How long is the word parley?")

	first := model.sent()[0]
	var offered []string
	for _, tool := range first.Tools {
		offered = append(offered, tool.Function.Name)
	}
	if !strings.Contains(strings.Join(offered, " "), "demo__lookup") || !strings.Contains(strings.Join(offered, " "), "request_user_input") {
		t.Fatalf("tools offered: %v", offered)
	}
	calls := toolCallsOf(rec)
	if len(calls) < 2 || calls[0].Status != domain.ToolRunning || calls[0].Update {
		t.Fatalf("calls = %+v", calls)
	}
	last := calls[len(calls)-1]
	if last.Status != domain.ToolDone || last.Server != "demo" || last.Tool != "lookup" || string(last.Arguments) != `{"word":"parley"}` || len(last.Content) != 3 || !last.Update {
		t.Errorf("last = %+v", last)
	}
	if got := toolMessage(t, model.last(), "c1"); !strings.HasPrefix(got, "parley: a word of 6 letters.") {
		t.Errorf("tool message = %q", got)
	}
	if msgs := rec.Messages(); msgs[len(msgs)-1] != "It has six letters." {
		t.Errorf("messages = %q", msgs)
	}
	// A later turn sends the same result again, from the log.
	model.then(text("Still six."))
	c.MustSend("And again?")
	if got := toolMessage(t, model.last(), "c1"); !strings.HasPrefix(got, "parley: a word of 6 letters.") {
		t.Errorf("rebuilt tool message = %q", got)
	}
}

func TestAToolServerAsksThroughAFormAndTheAnswerGoesBack(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__deploy", args: []string{`{"service":"api"}`}}))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	rec := c.MustSend("Deploy the api")
	q := onlyPending(t, c)
	if q.Asker != toolserver.Asker("demo") || q.Message != "Where should api go?" || !q.AllowCancel || !strings.HasSuffix(q.Key, "/environment") {
		t.Fatalf("question = %+v", q)
	}
	if calls := toolCallsOf(rec); calls[len(calls)-1].Status != domain.ToolWaiting {
		t.Fatalf("call = %+v", calls[len(calls)-1])
	}
	c.Answer(q, form("environment", "staging"))
	// Parley restarts while the person thinks: a new process, a new server session. The
	// call goes on from what the log holds.
	pool.Close()
	c.Agent = newAgent(t, model.url(), withTools(demoTools(t)))
	c.MustResume()
	q = onlyPending(t, c)
	if q.Message != "Which version of api goes to staging?" {
		t.Fatalf("second question = %+v", q)
	}
	c.Answer(q, form("version", "1.4.2"))
	model.then(text("Deployed."))
	rec = c.MustResume()
	if got := toolMessage(t, model.last(), "c1"); got != "Deployed api 1.4.2 to staging." {
		t.Errorf("tool message = %q", got)
	}
	calls := toolCallsOf(rec)
	if last := calls[len(calls)-1]; last.Status != domain.ToolDone || last.Took <= 0 {
		t.Errorf("last = %+v", last)
	}
}

// onlyPending returns the one pending question.
func onlyPending(t *testing.T, c *convo) domain.Question {
	t.Helper()
	p := c.Pending()
	if len(p) != 1 {
		t.Fatalf("pending = %+v", p)
	}
	return p[0]
}

func TestADeclinedFormAndASecretAreToldToTheModel(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__book_table", args: []string{`{}`}}, call{id: "c2", name: "demo__ask_secret", args: []string{`{}`}}))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	rec := c.MustSend("Book a table")
	calls := toolCallsOf(rec)
	var secret domain.ToolCall
	for _, tc := range calls {
		if tc.Tool == "ask_secret" {
			secret = tc
		}
	}
	if secret.Status != domain.ToolDone || len(secret.Notes) != 1 || !strings.Contains(secret.Notes[0], domain.SecretRefusal) {
		t.Fatalf("the secret call = %+v", secret)
	}
	q := onlyPending(t, c)
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Declined, Reason: "not today"})
	model.then(text("All right."))
	c.MustResume()
	req := model.last()
	if got := toolMessage(t, req, "c1"); got != "No table booked: the person chose decline." {
		t.Errorf("c1 = %q", got)
	}
	if got := toolMessage(t, req, "c2"); got != "The person's client answered decline." {
		t.Errorf("c2 = %q", got)
	}
}

func TestApprovalComesBeforeTheCallAndCanChangeItsArguments(t *testing.T) {
	pool := demoTools(t, func(c *toolserver.ServerConfig) { c.ApproveTools = []string{"delete_branch"} })
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__delete_branch", args: []string{`{"branch":"feature/x"}`}}))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	rec := c.MustSend("Clean up the branch")
	q := onlyPending(t, c)
	if q.SubmitLabel != "Approve and run" || q.DeclineLabel != "Reject" || len(q.Fields) != 2 || q.Fields[0].Name != "branch" || q.Fields[0].Default != "feature/x" {
		t.Fatalf("approval = %+v", q)
	}
	if calls := toolCallsOf(rec); len(calls) != 1 || calls[0].Status != domain.ToolWaiting {
		t.Fatalf("the call ran before approval: %+v", calls)
	}
	if _, errs := domain.Validate(q, form("branch", "")); errs["branch"] == "" {
		t.Error("an empty branch was accepted")
	}
	c.Answer(q, form("branch", "feature/y", "force", "true"))
	model.then(text("Done."))
	rec = c.MustResume()
	if got := toolMessage(t, model.last(), "c1"); got != "Deleted branch feature/y (force=true)." {
		t.Errorf("tool message = %q", got)
	}
	calls := toolCallsOf(rec)
	if last := calls[len(calls)-1]; string(last.Arguments) != `{"branch":"feature/y","force":true}` || len(last.Notes) != 1 {
		t.Errorf("last = %+v", last)
	}

	// Rejected, with a reason the model is told.
	model.then(toolCalls("", call{id: "c2", name: "demo__delete_branch", args: []string{`{"branch":"main"}`}}))
	c.MustSend("And main")
	q = onlyPending(t, c)
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Declined, Reason: "main stays"})
	model.then(text("Kept main."))
	rec = c.MustResume()
	if got := toolMessage(t, model.last(), "c2"); got != "Not run: the person rejected the call. Their reason: main stays" {
		t.Errorf("tool message = %q", got)
	}
	if calls := toolCallsOf(rec); calls[0].Status != domain.ToolRejected {
		t.Errorf("call = %+v", calls[0])
	}
}

func TestToolsWithoutSimpleSchemasAreApprovedAsJSON(t *testing.T) {
	pool := demoTools(t, func(c *toolserver.ServerConfig) { c.Approve = true; c.ReadOnly = []string{"lookup"} })
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__deploy", args: []string{`{"service":"api","extra":{"a":1}}`}}))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	c.MustSend("Deploy")
	q := onlyPending(t, c)
	if len(q.Fields) != 1 || q.Fields[0].Format != domain.FormatJSON {
		t.Fatalf("approval = %+v", q.Fields)
	}
	if _, errs := domain.Validate(q, form("arguments", `{"extra":1}`)); !strings.Contains(errs["arguments"], "Does not fit what the tool accepts") {
		t.Errorf("arguments without the required service: %v", errs)
	}
	if _, errs := domain.Validate(q, form("arguments", `not json`)); errs["arguments"] == "" {
		t.Error("text that is not JSON was accepted")
	}
}

func TestAMissingServerIsToldToTheModel(t *testing.T) {
	p, err := toolserver.NewPool(toolserver.Options{Agent: "helper", Servers: []toolserver.ServerConfig{{Name: "ghost", Command: "/nonexistent/server"}}})
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	t.Cleanup(p.Close)
	if err := p.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "ghost__search", args: []string{`{}`}}),
		text("The search tool is down."))
	c := newConvo(t, newAgent(t, model.url(), withTools(p)))
	rec := c.MustSend("Search for it")
	system := model.sent()[0].Messages[0].Content
	if !strings.Contains(system, "## Missing tools") || !strings.Contains(system, "- ghost:") {
		t.Errorf("system prompt:\n%s", system)
	}
	if got := toolMessage(t, model.last(), "c1"); !strings.Contains(got, "The tool server ghost is not available now") {
		t.Errorf("tool message = %q", got)
	}
	if calls := toolCallsOf(rec); len(calls) != 1 || calls[0].Status != domain.ToolFailed {
		t.Errorf("calls = %+v", calls)
	}
	var b []byte
	b, _ = json.Marshal(rec.Events)
	if strings.Contains(string(b), "request_state") {
		t.Error("a failed call kept a state")
	}
}

func TestAPageToOpenIsAskedAndTheCallGoesOn(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__connect_account", args: []string{`{}`}}, call{id: "c2", name: "demo__sync_calendar", args: []string{`{}`}}))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	c.MustSend("Connect my calendar and sync it")
	pending := c.Pending()
	if len(pending) != 2 {
		t.Fatalf("pending = %+v", pending)
	}
	for _, q := range pending {
		if !strings.Contains(q.Link, "/connect?id=") || len(q.Fields) != 0 || q.Asker != toolserver.Asker("demo") || q.SubmitLabel == "" {
			t.Fatalf("question = %+v", q)
		}
		// The person opens the page (the sign-in happens there), then says they are done.
		resp, err := http.Get(q.Link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.Answer(q, form())
	}
	model.then(text("Connected and synced."))
	c.MustResume()
	req := model.last()
	if got := toolMessage(t, req, "c1"); got != "Calendar connected." {
		t.Errorf("c1 = %q", got)
	}
	if got := toolMessage(t, req, "c2"); got != "Synced 3 events." {
		t.Errorf("c2 (URLElicitationRequired, sent again) = %q", got)
	}
}

func TestProgressShowsOnTheCardAndReadOnlyToolsSkipApproval(t *testing.T) {
	pool := demoTools(t, func(c *toolserver.ServerConfig) { c.Approve = true; c.ReadOnly = []string{"count_slowly"} })
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__count_slowly", args: []string{`{"n":40}`}}),
		text("Counted."))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	rec := c.MustSend("Count to 40")
	if len(c.Pending()) != 0 {
		t.Fatalf("a read-only tool asked for approval: %+v", c.Pending())
	}
	var progress []domain.ToolProgress
	for _, tc := range toolCallsOf(rec) {
		if tc.Progress != nil {
			progress = append(progress, *tc.Progress)
		}
	}
	if len(progress) == 0 || progress[0].Total != 40 || !strings.HasPrefix(progress[0].Message, "counted ") {
		t.Errorf("progress = %+v", progress)
	}
	if got := toolMessage(t, model.last(), "c1"); got != "Counted to 40." {
		t.Errorf("tool message = %q", got)
	}
}

func TestACallCutOffByAStopIsReportedOnRetry(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t, text("It was cut off."))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	// The log as a shutdown in the middle of a call leaves it: the call's card says running.
	c.History = append(c.History,
		domain.Event{Kind: domain.EventUserMessage, Text: "Count to 100", Author: "person"},
		domain.Event{Kind: domain.EventCheckpoint, Checkpoint: json.RawMessage(`{"backend":"openai","v":1,"tool_calls":[{"id":"c1","name":"demo__count_slowly","arguments":"{\"n\":100}"}]}`)},
		domain.Event{Kind: domain.EventToolCall, ToolCall: &domain.ToolCall{Key: "1-0-0", ID: "c1", Server: "demo", Tool: "count_slowly",
			Arguments: json.RawMessage(`{"n":100}`), Status: domain.ToolRunning, Started: time.Now()}},
		domain.Event{Kind: domain.EventRunState, State: domain.StateInterrupted})
	rec, err := c.Retry()
	if err != nil {
		t.Fatal(err)
	}
	calls := toolCallsOf(rec)
	if len(calls) != 1 || calls[0].Status != domain.ToolFailed || !strings.Contains(calls[0].Error, "cut off") || !calls[0].Update {
		t.Fatalf("calls = %+v", calls)
	}
	if got := toolMessage(t, model.last(), "c1"); !strings.Contains(got, "may have taken effect in part") {
		t.Errorf("tool message = %q", got)
	}
}

func TestAnApprovalNeverAskedIsAskedOnRetry(t *testing.T) {
	pool := demoTools(t, func(c *toolserver.ServerConfig) { c.Approve = true })
	model := newFakeServer(t)
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	// A crash came between the card and its question.
	c.History = append(c.History,
		domain.Event{Kind: domain.EventUserMessage, Text: "Delete feature/x", Author: "person"},
		domain.Event{Kind: domain.EventCheckpoint, Checkpoint: json.RawMessage(`{"backend":"openai","v":1,"tool_calls":[{"id":"c1","name":"demo__delete_branch","arguments":"{\"branch\":\"feature/x\"}"}]}`)},
		domain.Event{Kind: domain.EventToolCall, ToolCall: &domain.ToolCall{Key: "1-0-0", ID: "c1", Server: "demo", Tool: "delete_branch",
			Arguments: json.RawMessage(`{"branch":"feature/x"}`), Status: domain.ToolWaiting, Waiting: "the person’s approval", Started: time.Now()}},
		domain.Event{Kind: domain.EventRunState, State: domain.StateInterrupted})
	if _, err := c.Retry(); err != nil {
		t.Fatal(err)
	}
	q := onlyPending(t, c)
	if q.Key != "1-0-0/approve" || q.Fields[0].Default != "feature/x" {
		t.Fatalf("question = %+v", q)
	}
	if len(model.sent()) != 0 {
		t.Error("the model was called while the approval waits")
	}
}

func TestANewMessageEndsTheCallsThatWaited(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t, toolCalls("", call{id: "c1", name: "demo__book_table", args: []string{`{}`}}))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	c.MustSend("Book a table")
	q := onlyPending(t, c)
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Superseded, Reason: "A new message came."})
	model.then(text("Forget the table then."))
	rec := c.MustSend("Never mind, no table")
	calls := toolCallsOf(rec)
	if len(calls) != 1 || calls[0].Status != domain.ToolFailed || !strings.Contains(calls[0].Error, "new message") {
		t.Fatalf("calls = %+v", calls)
	}
	if got := toolMessage(t, model.last(), "c1"); !strings.Contains(got, "did not finish") {
		t.Errorf("tool message = %q", got)
	}
}

func TestAnOlderServerAsksInTheMiddleOfTheCallAndWaits(t *testing.T) {
	// A stateful HTTP server speaks MCP 2025-11-25: its questions come as elicitation/create
	// while the call is open, and the step waits for the answers.
	pool := mcptest.Pool(t, mcptest.StatefulHTTPDemo(t, "demo"))
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__deploy", args: []string{`{"service":"api"}`}}),
		text("Deployed."))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	var asked []domain.Question
	c.LiveAnswer = func(q domain.Question) domain.Resolution {
		asked = append(asked, q)
		values := map[string]any{"environment": "production"}
		if q.Fields[0].Name == "version" {
			values = map[string]any{"version": "1.4.2"}
		}
		return domain.Resolution{Outcome: domain.Answered, Values: values, By: "person"}
	}
	c.MustSend("Deploy the api")
	if len(asked) != 1 || !asked[0].Live || asked[0].Asker != toolserver.Asker("demo") || asked[0].Message != "Where should api go?" {
		t.Fatalf("asked = %+v", asked)
	}
	// The Go SDK's server asks one round live, and sends the next as a round trip.
	q := onlyPending(t, c)
	if q.Live || q.Message != "Which version of api goes to production?" {
		t.Fatalf("second question = %+v", q)
	}
	c.Answer(q, form("version", "1.4.2"))
	rec := c.MustResume()
	if got := toolMessage(t, model.last(), "c1"); got != "Deployed api 1.4.2 to production." {
		t.Errorf("tool message = %q", got)
	}
	if calls := toolCallsOf(rec); calls[len(calls)-1].Status != domain.ToolDone {
		t.Errorf("calls = %+v", calls)
	}
	if len(pool.Problems()) != 0 {
		t.Errorf("problems = %q", pool.Problems())
	}
}

// cutOffWhileAsked is a conversation whose run was cut off while the demo's deploy waited
// for a live question: Parley stopped, and the question expired.
func cutOffWhileAsked(c *convo) {
	c.History = append(c.History,
		domain.Event{Kind: domain.EventUserMessage, Text: "Deploy", Author: "person"},
		domain.Event{Kind: domain.EventCheckpoint, Checkpoint: json.RawMessage(`{"backend":"openai","v":1,"tool_calls":[{"id":"c1","name":"demo__deploy","arguments":"{\"service\":\"api\"}"}]}`)},
		domain.Event{Kind: domain.EventToolCall, ToolCall: &domain.ToolCall{Key: "1-0-0", ID: "c1", Server: "demo", Tool: "deploy", Arguments: json.RawMessage(`{"service":"api"}`),
			Status: domain.ToolWaiting, Waiting: "the person’s answer", Round: 1, Started: time.Now()}},
		domain.Event{Kind: domain.EventQuestionAsked, Question: &domain.Question{ID: 7, Key: "1-0-0/1/live-1", Live: true, Message: "Where?",
			Fields: []domain.Field{{Name: "environment", Kind: domain.KindText}}}},
		domain.Event{Kind: domain.EventQuestionResolved, Resolution: &domain.Resolution{QuestionID: 7, Outcome: domain.Expired, Reason: domain.StoppedWhileAsked}},
		domain.Event{Kind: domain.EventRunState, State: domain.StateInterrupted})
}

func TestALiveQuestionLeftByARestartRunsTheCallAgainOnRetry(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t, text("Deployed."))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	cutOffWhileAsked(c)
	rec, err := c.Retry()
	if err != nil {
		t.Fatal(err)
	}
	// The call runs again, and the server asks again: the model is not called meanwhile.
	calls := toolCallsOf(rec)
	if last := calls[len(calls)-1]; last.Status != domain.ToolWaiting || !slices.Contains(last.Notes, "Run again on Retry.") || last.Round != 2 {
		t.Fatalf("calls = %+v", calls)
	}
	if q := onlyPending(t, c); q.Message != "Where should api go?" || q.Key != "1-0-0/2/environment" {
		t.Fatalf("asked again = %+v", q)
	}
	if n := len(model.sent()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
}

func TestALiveQuestionLeftByARestartFailsTheCallOnAResume(t *testing.T) {
	pool := demoTools(t)
	model := newFakeServer(t, text("The deploy did not finish."))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	cutOffWhileAsked(c)
	rec, err := c.Resume()
	if err != nil {
		t.Fatal(err)
	}
	calls := toolCallsOf(rec)
	if len(calls) != 1 || calls[0].Status != domain.ToolFailed || !strings.Contains(calls[0].Error, "session ended") {
		t.Fatalf("calls = %+v", calls)
	}
	if got := toolMessage(t, model.last(), "c1"); !strings.Contains(got, "session ended") {
		t.Errorf("tool message = %q", got)
	}
}

func TestRetryAsksAgainWhatAFailureSetAside(t *testing.T) {
	pool := demoTools(t, func(c *toolserver.ServerConfig) { c.ApproveTools = []string{"delete_branch"} })
	model := newFakeServer(t,
		toolCalls("", call{id: "c1", name: "demo__delete_branch", args: []string{`{"branch":"old"}`}}, call{id: "c2", name: "demo__book_table", args: []string{`{}`}}))
	c := newConvo(t, newAgent(t, model.url(), withTools(pool)))
	c.MustSend("Clean up and book")
	if len(c.Pending()) != 2 {
		t.Fatalf("pending = %+v", c.Pending())
	}
	// The run fails: its questions are set aside, and Retry asks them again.
	for _, q := range c.Pending() {
		c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Superseded, Reason: "The run failed; Retry asks again."})
	}
	c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateFailed, Error: "boom"})
	if _, err := c.Retry(); err != nil {
		t.Fatal(err)
	}
	again := c.Pending()
	if len(again) != 2 || !strings.HasSuffix(again[0].Key, "/approve") || again[1].Message != "Which table should I book?" {
		t.Fatalf("asked again = %+v", again)
	}
	c.Answer(again[0], form("branch", "old"))
	c.Resolve(domain.Resolution{QuestionID: again[1].ID, Outcome: domain.Declined})
	model.then(text("Done."))
	c.MustResume()
	req := model.last()
	if got := toolMessage(t, req, "c1"); got != "Deleted branch old (force=false)." {
		t.Errorf("c1 = %q", got)
	}
	if got := toolMessage(t, req, "c2"); got != "No table booked: the person chose decline." {
		t.Errorf("c2 = %q", got)
	}
}
