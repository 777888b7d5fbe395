package agui_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/agui"
	"github.com/parley-chat/parley/backend/agui/aguitest"
	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/domain"
)

func newAgent(t *testing.T, url string, edit ...func(*agui.Config)) *agui.Agent {
	t.Helper()
	cfg := agui.Config{Name: "research", URL: url}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := agui.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func joined(rec *backendtest.Recorder) string { return strings.Join(rec.Messages(), "\n") }

// lastInput is the newest RunAgentInput the test agent got; it fails the test when the
// official schema refused it.
func lastInput(t *testing.T, ta *aguitest.Agent) map[string]any {
	t.Helper()
	ins := ta.Inputs(t)
	if len(ins) == 0 {
		t.Fatal("the agent got no input")
	}
	in := ins[len(ins)-1]
	if !in.Valid {
		t.Fatalf("@ag-ui/core refused the input: %s", in.Error)
	}
	return in.Input
}

func TestAgent_StreamsMarkdownAndSendsAValidInput(t *testing.T) {
	ta := aguitest.Start(t)
	a := newAgent(t, ta.URL)
	if got := a.Info().Title; got != "Research assistant (AG-UI test agent)" {
		t.Errorf("title from the agent's capabilities: %q", got)
	}
	c := backendtest.NewConvo(t, a)
	c.Language = "en"
	rec := c.MustSend("markdown please")
	if got := joined(rec); !strings.Contains(got, "# Findings") || !strings.Contains(got, "```go") {
		t.Fatalf("reply: %q", got)
	}
	if len(rec.Deltas) < 5 {
		t.Errorf("the reply came in %d pieces; want it streamed", len(rec.Deltas))
	}
	first := lastInput(t, ta)
	rec = c.MustSend("and again")
	if got := joined(rec); got != "You said: and again" {
		t.Fatalf("second reply: %q", got)
	}
	second := lastInput(t, ta)
	if first["threadId"] != second["threadId"] || first["runId"] == second["runId"] {
		t.Errorf("thread %v then %v, run %v then %v: want one thread, a new run", first["threadId"], second["threadId"], first["runId"], second["runId"])
	}
	msgs, _ := second["messages"].([]any)
	var roles []string
	ids := map[string]bool{}
	for _, m := range msgs {
		mm := m.(map[string]any)
		roles = append(roles, mm["role"].(string))
		ids[mm["id"].(string)] = true
	}
	if strings.Join(roles, ",") != "user,assistant,user" || len(ids) != 3 {
		t.Errorf("messages: %v", msgs)
	}
	if id := msgs[1].(map[string]any)["id"].(string); !strings.HasPrefix(id, "msg-") {
		t.Errorf("the agent's reply goes back as %q, not under the agent's own messageId", id)
	}
	tools, _ := second["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != "request_user_input" {
		t.Errorf("tools: %v", second["tools"])
	}
	if ctx, _ := second["context"].([]any); len(ctx) != 1 {
		t.Errorf("context: %v", second["context"])
	}
	for _, k := range []string{"resume", "parentRunId"} {
		if _, ok := second[k]; ok {
			t.Errorf("%s sent, want it left out", k)
		}
	}
}

func TestAgent_InterruptOnAToolCallAnswered(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	rec := c.MustSend("deploy the site")
	q := backendtest.OnlyQuestion(t, rec)
	if q.Message != "Deploy to production?" || len(q.Fields) != 3 || q.Fields[0].Name != "approved" || q.Fields[0].Kind != domain.KindBoolean || !q.Fields[0].Required {
		t.Fatalf("question: %+v", q)
	}
	// Approve with edits: the call's arguments, to edit as JSON, checked against their schema.
	edit := q.Fields[1]
	if edit.Name != "editedArgs" || edit.Format != domain.FormatJSON || edit.Default != "{\n  \"env\": \"production\"\n}" {
		t.Fatalf("editedArgs: %+v", edit)
	}
	if _, errs := domain.Validate(q, backendtest.Form("approved", "true", "editedArgs", `{"env":"moon"}`)); errs["editedArgs"] == "" {
		t.Errorf("arguments outside their schema were accepted")
	}
	ctx, _ := q.Context.(map[string]any)
	if ctx["reason"] != "tool_call" || ctx["tool call"] != "deploy" {
		t.Errorf("context: %v", q.Context)
	}
	cards := toolCards(c.History)
	if len(cards) != 1 || cards[0].Status != domain.ToolWaiting || string(cards[0].Arguments) != `{"env":"production"}` {
		t.Fatalf("tool card: %+v", cards)
	}
	c.Answer(q, backendtest.Form("approved", "true", "note", "ship it", "editedArgs", `{"env": "staging"}`))
	rec = c.MustResume()
	if got := joined(rec); !strings.Contains(got, `: {"approved":true,"editedArgs":{"env":"staging"},"note":"ship it"}`) {
		t.Fatalf("reply: %q", got)
	}
	in := lastInput(t, ta)
	resume, _ := in["resume"].([]any)
	if len(resume) != 1 || resume[0].(map[string]any)["status"] != "resolved" {
		t.Fatalf("resume: %v", in["resume"])
	}
	cards = toolCards(c.History)
	if len(cards) != 1 || cards[0].Status != domain.ToolDone || cards[0].Result != "Deployed to staging." {
		t.Fatalf("tool card after: %+v", cards)
	}
	// The next run has nothing to resume, and the call and its result in its history.
	c.MustSend("thanks")
	in = lastInput(t, ta)
	if _, ok := in["resume"]; ok {
		t.Errorf("resume sent again: %v", in["resume"])
	}
	var sawResult bool
	for _, m := range in["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["role"] == "tool" && mm["content"] == "Deployed to staging." {
			sawResult = true
		}
	}
	if !sawResult {
		t.Errorf("the tool result is not in the history: %v", in["messages"])
	}
}

// toolCards is each tool card as it stands at the end of history.
func toolCards(history []domain.Event) []domain.ToolCall {
	var keys []string
	last := map[string]domain.ToolCall{}
	for _, ev := range history {
		if ev.Kind == domain.EventToolCall {
			if _, ok := last[ev.ToolCall.Key]; !ok {
				keys = append(keys, ev.ToolCall.Key)
			}
			last[ev.ToolCall.Key] = *ev.ToolCall
		}
	}
	var out []domain.ToolCall
	for _, k := range keys {
		out = append(out, last[k])
	}
	return out
}

func TestAgent_InterruptDeclinedIsCancelledWithTheReason(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	q := backendtest.OnlyQuestion(t, c.MustSend("deploy"))
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Declined, Reason: "not on a Friday"})
	rec := c.MustResume()
	if got := joined(rec); !strings.Contains(got, "Cancelled int-") || !strings.Contains(got, "not on a Friday") {
		t.Fatalf("reply: %q", got)
	}
	if cards := toolCards(c.History); cards[0].Result != "Not run." {
		t.Errorf("card: %+v", cards[0])
	}
}

func TestAgent_TwoInterruptsResumeTogether(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	rec := c.MustSend("two please")
	qs := rec.Questions()
	if len(qs) != 2 {
		t.Fatalf("questions: %d", len(qs))
	}
	if p := rec.Plans(); len(p) == 0 || p[len(p)-1].Steps[0].Title != "Collect the details" {
		t.Errorf("plan from the state: %+v", p)
	}
	form := qs[0]
	if form.Fields[0].Name != "quarter" || form.Fields[0].Kind != domain.KindSelect || form.Fields[1].Kind != domain.KindInteger {
		t.Fatalf("form: %+v", form.Fields)
	}
	c.Answer(form, backendtest.Form("quarter", "Q3", "year", "2026", "revenue", "4200000.5"))
	c.Answer(qs[1], backendtest.Form("today", "false"))
	rec = c.MustResume()
	got := joined(rec)
	if !strings.Contains(got, `{"quarter":"Q3","revenue":4200000.5,"year":2026}`) || !strings.Contains(got, `{"today":false}`) {
		t.Fatalf("reply: %q", got)
	}
	if n := len(lastInput(t, ta)["resume"].([]any)); n != 2 {
		t.Errorf("%d resume entries, want 2", n)
	}
}

func TestAgent_NewMessageCancelsOpenInterrupts(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	backendtest.OnlyQuestion(t, c.MustSend("form"))
	rec := c.MustSend("never mind, hello")
	got := joined(rec)
	if !strings.Contains(got, "Cancelled int-") || !strings.Contains(got, "new message") || !strings.Contains(got, "You said: never mind, hello") {
		t.Fatalf("reply: %q", got)
	}
}

func TestAgent_ExpiredInterruptCanOnlyBeCancelled(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	q := backendtest.OnlyQuestion(t, c.MustSend("expire 60"))
	if time.Until(q.Deadline) < 50*time.Second || time.Until(q.Deadline) > 61*time.Second {
		t.Fatalf("deadline: %v", q.Deadline)
	}
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Expired, Reason: "Nobody answered in time."})
	rec := c.MustResume()
	if got := joined(rec); !strings.Contains(got, "Cancelled int-") {
		t.Fatalf("reply: %q", got)
	}
}

func TestAgent_FrontendToolRoundTrip(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	rec := c.MustSend("pick a venue")
	q := backendtest.OnlyQuestion(t, rec)
	if q.Message != "Which venue?" || q.Fields[0].Kind != domain.KindSelect || q.Fields[0].Options[0].Value != "Pike Loft" {
		t.Fatalf("question: %+v", q)
	}
	if len(toolCards(c.History)) != 0 {
		t.Errorf("request_user_input shows as a tool card too")
	}
	c.Answer(q, backendtest.Form("choice", "Harbor Hall"))
	rec = c.MustResume()
	if got := joined(rec); !strings.Contains(got, "Tool answer for "+q.Key+`: {"outcome":"answered","values":{"choice":"Harbor Hall"}}`) {
		t.Fatalf("reply: %q", got)
	}
	msgs := lastInput(t, ta)["messages"].([]any)
	call := msgs[len(msgs)-2].(map[string]any)
	if calls, _ := call["toolCalls"].([]any); len(calls) != 1 || calls[0].(map[string]any)["id"] != q.Key {
		t.Errorf("the call before its result: %v", call)
	}
}

func TestAgent_RunErrorThenRetry(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	rec, err := c.Send("fail now")
	if err == nil || !strings.Contains(err.Error(), "The model provider is down. (provider_down)") || !domain.IsFault(err) {
		t.Fatalf("error: %v", err)
	}
	if got := joined(rec); !strings.Contains(got, "Starting") {
		t.Errorf("the text before the error is lost: %q", got)
	}
	if _, err := c.Retry(); err == nil {
		t.Fatal("retry of a failing agent passed")
	}
}

func TestAgent_InvalidEventNamesIt(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	_, err := c.Send("invalid")
	if err == nil || !strings.Contains(err.Error(), "invalid TEXT_MESSAGE_CONTENT event: messageId is required") {
		t.Fatalf("error: %v", err)
	}
}

func TestAgent_StopAbortsTheRun(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	ctx, cancel := context.WithCancelCause(context.Background())
	c.Ctx = ctx
	c.OnText = func(sofar string) {
		if strings.Contains(sofar, "tick 3") {
			cancel(domain.ErrStopped)
		}
	}
	start := time.Now()
	rec, err := c.Send("slow")
	if !errors.Is(err, domain.ErrStopped) {
		t.Fatalf("error: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("the stop took %v", time.Since(start))
	}
	if !strings.Contains(strings.Join(rec.Deltas, ""), "tick 3") {
		t.Errorf("text so far: %q", rec.Deltas)
	}
}

func TestAgent_CancelledOutcomeEndsStopped(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	if _, err := c.Send("cancel it"); !errors.Is(err, domain.ErrStopped) {
		t.Fatalf("error: %v", err)
	}
}

func TestAgent_StepsAndStateCarryOver(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	rec := c.MustSend("steps")
	plans := rec.Plans()
	if len(plans) == 0 {
		t.Fatal("no progress shown")
	}
	last := plans[len(plans)-1]
	if len(last.Steps) != 2 || last.Steps[0].Title != "search" || last.Steps[1].Status != domain.StepDone {
		t.Errorf("progress: %+v", last)
	}
	c.MustSend("hello")
	state, _ := json.Marshal(lastInput(t, ta)["state"])
	if string(state) != `{"count":2,"tags":["a"]}` {
		t.Errorf("state sent: %s", state)
	}
}

func TestAgent_BearerToken(t *testing.T) {
	ta := aguitest.Start(t, "AGUI_TOKEN=s3cret")
	c := backendtest.NewConvo(t, newAgent(t, ta.URL, func(cfg *agui.Config) { cfg.Credential = "RESEARCH_TOKEN" }))
	_, err := c.Send("hello")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "RESEARCH_TOKEN") {
		t.Fatalf("error: %v", err)
	}
	c = backendtest.NewConvo(t, newAgent(t, ta.URL, func(cfg *agui.Config) { cfg.BearerToken = "s3cret" }))
	if got := joined(c.MustSend("hello")); got != "You said: hello" {
		t.Fatalf("reply: %q", got)
	}
}

func TestAgent_Unreachable(t *testing.T) {
	c := backendtest.NewConvo(t, newAgent(t, "http://127.0.0.1:1/agent"))
	_, err := c.Send("hello")
	if err == nil || !strings.Contains(err.Error(), "cannot reach the agent at http://127.0.0.1:1/agent") {
		t.Fatalf("error: %v", err)
	}
}

// Many conversations ask and are answered at once, each getting its own answer back.
func TestAgent_ManyConversationsAtOnce(t *testing.T) {
	ta := aguitest.Start(t)
	a := newAgent(t, ta.URL)
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- converse(t, a, i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func converse(t *testing.T, a *agui.Agent, i int) error {
	c := backendtest.NewConvo(t, a)
	rec, err := c.Send("form")
	if err != nil {
		return err
	}
	qs := rec.Questions()
	if len(qs) != 1 {
		return fmt.Errorf("conversation %d: %d questions", i, len(qs))
	}
	values, verrs := domain.Validate(qs[0], backendtest.Form("quarter", "Q1", "year", fmt.Sprint(2000+i), "revenue", "1"))
	if verrs != nil {
		return fmt.Errorf("conversation %d: %v", i, verrs)
	}
	c.Resolve(domain.Resolution{QuestionID: qs[0].ID, Outcome: domain.Answered, Values: values})
	rec, err = c.Resume()
	if err != nil {
		return err
	}
	if got := joined(rec); !strings.Contains(got, fmt.Sprintf(`"year":%d`, 2000+i)) {
		return fmt.Errorf("conversation %d got %q", i, got)
	}
	return nil
}

// A regenerated reply is a new run whose messages are the new version's: the person's
// message, not the reply replaced.
func TestAgent_RegenerateSendsTheNewVersionsMessages(t *testing.T) {
	ta := aguitest.Start(t)
	c := backendtest.NewConvo(t, newAgent(t, ta.URL))
	c.MustSend("first")
	c.MustSend("and again")
	rec, err := c.Regenerate()
	if err != nil {
		t.Fatal(err)
	}
	if got := joined(rec); got != "You said: and again" {
		t.Fatalf("regenerated reply: %q", got)
	}
	msgs, _ := lastInput(t, ta)["messages"].([]any)
	var got []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		got = append(got, fmt.Sprintf("%s:%v", mm["role"], mm["content"]))
	}
	if len(got) != 3 || got[0] != "user:first" || got[2] != "user:and again" || strings.Count(strings.Join(got, "|"), "and again") != 1 {
		t.Errorf("messages of the regenerated run: %q; want first, its reply, and again", got)
	}
}
