package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/acp"
	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/domain"
)

// testAgent is the coding agent under test: agent.mjs, built on @agentclientprotocol/sdk,
// run by node in a workspace of its own, logging what it gets to a file.
type testAgent struct {
	*acp.Agent
	cfg acp.Config
	dir string // the workspace
	log string // the agent's event log
}

func startAgent(t *testing.T, change ...func(*acp.Config)) *testAgent {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	root, err := backendtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "backend", "acp", "testdata", "agent.mjs")
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		t.Fatal("@agentclientprotocol/sdk is not installed: run npm ci")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ta := &testAgent{dir: dir, log: filepath.Join(base, "agent.log")}
	w := &testWriter{t: t}
	t.Cleanup(w.close) // last: the SDK's goroutines may log after Close
	ta.cfg = acp.Config{Name: "coder", Title: "Coding agent", Command: node, Args: []string{script}, Cwd: dir,
		// GORACE: the guard is this test binary, which, built with -race, sleeps a second as it exits.
		Env:    map[string]string{"ACP_TEST_LOG": ta.log, "GORACE": "atexit_sleep_ms=0"},
		Logger: slog.New(slog.NewTextHandler(w, nil))}
	for _, f := range change {
		f(&ta.cfg)
	}
	ta.Agent, err = acp.New(ta.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ta.Close)
	return ta
}

// restart closes the agent's processes and starts it again, as a restart of Parley does.
func (ta *testAgent) restart(t *testing.T) {
	t.Helper()
	ta.Close()
	a, err := acp.New(ta.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ta.Agent = a
	t.Cleanup(a.Close)
}

// testWriter logs to the test until it ends.
type testWriter struct {
	t      *testing.T
	mu     sync.Mutex
	closed bool
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimSpace(string(b)))
	}
	return len(b), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

// logged is one line of the agent's event log.
type logged struct {
	PID                int             `json:"pid"`
	Event              string          `json:"event"`
	SessionID          string          `json:"sessionId"`
	Cwd                string          `json:"cwd"`
	Text               string          `json:"text"`
	MCPServers         json.RawMessage `json:"mcpServers"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	Outcome            json.RawMessage `json:"outcome"`
}

func (ta *testAgent) events(t *testing.T, event string) []logged {
	t.Helper()
	f, err := os.Open(ta.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logged
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logged
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if event == "" || l.Event == event {
			out = append(out, l)
		}
	}
	return out
}

// waitFor waits until cond holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !strings.Contains(string(b), ") Z ")
}

// choose answers a permission question with the option whose name is given.
func choose(t *testing.T, name string) func(domain.Question) domain.Resolution {
	return func(q domain.Question) domain.Resolution {
		if !q.Choice || len(q.Fields) != 1 {
			t.Errorf("a permission question is one choice: %+v", q)
			return domain.Resolution{Outcome: domain.Cancelled}
		}
		for _, o := range q.Fields[0].Options {
			if o.Label == name {
				return domain.Resolution{Outcome: domain.Answered, Values: map[string]any{q.Fields[0].Name: o.Value}, At: time.Now()}
			}
		}
		t.Errorf("no option %q in %+v", name, q.Fields[0].Options)
		return domain.Resolution{Outcome: domain.Cancelled}
	}
}

func tools(rec *backendtest.Recorder) map[string]domain.ToolCall {
	out := map[string]domain.ToolCall{}
	for _, ev := range rec.Events {
		if ev.Kind == domain.EventToolCall {
			out[ev.ToolCall.Key] = *ev.ToolCall
		}
	}
	return out
}

func toolNamed(t *testing.T, rec *backendtest.Recorder, title string) domain.ToolCall {
	t.Helper()
	for _, tc := range tools(rec) {
		if tc.Tool == title {
			return tc
		}
	}
	t.Fatalf("no tool card %q in %+v", title, tools(rec))
	return domain.ToolCall{}
}

func TestAnAllowedEditChangesTheFile(t *testing.T) {
	ta := startAgent(t)
	if err := os.WriteFile(filepath.Join(ta.dir, "notes.txt"), []byte("first line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := backendtest.NewConvo(t, ta)
	c.LiveAnswer = choose(t, "Allow")
	rec := c.MustSend("Please edit the notes")
	if got := strings.Join(rec.Messages(), ""); got != "I changed notes.txt." {
		t.Errorf("reply = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(ta.dir, "notes.txt")); string(b) != "first line\nhello from the agent\n" {
		t.Errorf("notes.txt = %q", b)
	}
	q := backendtest.OnlyQuestion(t, rec)
	if !q.Live || q.Asker != "Coding agent" || q.Type != domain.RequestApproval || !strings.Contains(q.Message, "Edit notes.txt") {
		t.Errorf("question = %+v", q)
	}
	var labels, hints []string
	for _, o := range q.Fields[0].Options {
		labels, hints = append(labels, o.Label), append(hints, o.Hint)
	}
	if !slices.Equal(labels, []string{"Allow", "Always allow edits", "Reject", "Never allow edits"}) {
		t.Errorf("options = %q", labels)
	}
	if !strings.HasPrefix(hints[0], "Allow once") || !strings.HasPrefix(hints[1], "Allow always") || !strings.HasPrefix(hints[2], "Reject once") || !strings.HasPrefix(hints[3], "Reject always") {
		t.Errorf("hints = %q", hints)
	}
	ctx, _ := q.Context.(string)
	for _, want := range []string{"**Kind:** edit", "notes.txt:1", "```diff", "--- a/notes.txt", "+hello from the agent", " first line"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("the question's context lacks %q:\n%s", want, ctx)
		}
	}
	tc := toolNamed(t, rec, "Edit notes.txt")
	if tc.Status != domain.ToolDone || tc.Kind != "edit" || !slices.Equal(tc.Locations, []string{"notes.txt:1"}) {
		t.Errorf("card = %+v", tc)
	}
	if len(tc.Content) == 0 || tc.Content[0].Type != "diff" || !strings.Contains(tc.Content[0].Text, "+hello from the agent") {
		t.Errorf("card content = %+v", tc.Content)
	}
	if !slices.ContainsFunc(tc.Notes, func(n string) bool {
		return strings.Contains(n, "Parley wrote notes.txt for the agent (+1 −0 lines)")
	}) {
		t.Errorf("the write is not on the card: %q", tc.Notes)
	}

	// What went over the wire, as the SDK's agent received it.
	inits := ta.events(t, "initialize")
	if len(inits) != 1 {
		t.Fatalf("initialize: %d", len(inits))
	}
	var caps struct {
		FS          map[string]bool `json:"fs"`
		Elicitation map[string]any  `json:"elicitation"`
		Terminal    *bool           `json:"terminal"`
	}
	if err := json.Unmarshal(inits[0].ClientCapabilities, &caps); err != nil || !caps.FS["readTextFile"] || !caps.FS["writeTextFile"] || caps.Elicitation["form"] == nil || (caps.Terminal != nil && *caps.Terminal) {
		t.Errorf("client capabilities = %s", inits[0].ClientCapabilities)
	}
	news := ta.events(t, "new")
	if len(news) != 1 || news[0].Cwd != ta.dir || string(news[0].MCPServers) != "[]" {
		t.Errorf("session/new = %+v", news)
	}
	perms := ta.events(t, "permission")
	if len(perms) != 1 || !strings.Contains(string(perms[0].Outcome), `"optionId":"allow-once"`) || !strings.Contains(string(perms[0].Outcome), `"outcome":"selected"`) {
		t.Errorf("permission answers = %+v", perms)
	}
}

func TestARejectedEditLeavesTheFileAlone(t *testing.T) {
	ta := startAgent(t)
	c := backendtest.NewConvo(t, ta)
	c.LiveAnswer = choose(t, "Reject")
	rec := c.MustSend("edit")
	if got := strings.Join(rec.Messages(), ""); got != "I left notes.txt alone." {
		t.Errorf("reply = %q", got)
	}
	if _, err := os.Stat(filepath.Join(ta.dir, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("notes.txt was written: %v", err)
	}
	if tc := toolNamed(t, rec, "Edit notes.txt"); tc.Status != domain.ToolRejected {
		t.Errorf("card status = %s", tc.Status)
	}
}

func TestAlwaysAllowIsRememberedForTheSession(t *testing.T) {
	ta := startAgent(t)
	c := backendtest.NewConvo(t, ta)
	asked := 0
	c.LiveAnswer = func(q domain.Question) domain.Resolution {
		asked++
		return choose(t, "Always allow edits")(q)
	}
	rec := c.MustSend("edit twice")
	if got := strings.Join(rec.Messages(), ""); !strings.Contains(got, "notes.txt: changed") || !strings.Contains(got, "todo.txt: changed") {
		t.Errorf("reply = %q", got)
	}
	if asked != 1 {
		t.Errorf("the person was asked %d times, want once", asked)
	}
	second := toolNamed(t, rec, "Edit todo.txt")
	if !slices.ContainsFunc(second.Notes, func(n string) bool { return strings.Contains(n, "Allowed without asking: “Always allow edits”") }) {
		t.Errorf("the second edit does not say it was allowed without asking: %q", second.Notes)
	}
	// The next message of the session is not asked either.
	rec = c.MustSend("edit")
	if asked != 1 || len(rec.Questions()) != 0 {
		t.Errorf("asked again: %d", asked)
	}
	if n := len(ta.events(t, "permission")); n != 3 {
		t.Errorf("the agent had %d permission answers, want 3", n)
	}
}

func TestReadPlanAndMarkdownStream(t *testing.T) {
	ta := startAgent(t)
	if err := os.WriteFile(filepath.Join(ta.dir, "README.md"), []byte("# My app\n\nIt does things.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := backendtest.NewConvo(t, ta)
	rec := c.MustSend("read the readme")
	if got := strings.Join(rec.Messages(), ""); got != "README.md starts with: # My app" {
		t.Errorf("reply = %q", got)
	}
	if tc := toolNamed(t, rec, "Read README.md"); tc.Status != domain.ToolDone || tc.Kind != "read" || len(tc.Content) != 1 || tc.Content[0].Text != "# My app\n\nIt does things.\n" {
		t.Errorf("read card = %+v", tc)
	}

	rec = c.MustSend("make a plan")
	plans := rec.Plans()
	if len(plans) != 2 || len(plans[1].Steps) != 3 || plans[1].Steps[0].Status != domain.StepDone || plans[1].Steps[1].Status != domain.StepInProgress || plans[1].Steps[2].Title != "Run the tests" {
		t.Errorf("plans = %+v", plans)
	}

	rec = c.MustSend("markdown please")
	want := "# Result\n\nHere is **bold** text and a list:\n\n- one\n- two\n\n```go\nfmt.Println(\"hi\")\n```\n\n<img src=x onerror=alert(1)><div data-on:click=\"alert(1)\">click</div>\n"
	if got := strings.Join(rec.Messages(), ""); got != want {
		t.Errorf("reply = %q", got)
	}
	if len(rec.Deltas) < 5 {
		t.Errorf("the reply came in %d pieces, want it streamed", len(rec.Deltas))
	}
	// One process served the three messages, in one session.
	if n := len(ta.events(t, "start")); n != 1 {
		t.Errorf("%d processes started", n)
	}
	if n := len(ta.events(t, "new")); n != 1 {
		t.Errorf("%d sessions started", n)
	}
}

func TestEscapesFromTheWorkspaceAreRefused(t *testing.T) {
	ta := startAgent(t)
	base := filepath.Dir(ta.dir)
	if err := os.WriteFile(filepath.Join(base, "outside.txt"), []byte("secret outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside.txt"), filepath.Join(ta.dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	rec := backendtest.NewConvo(t, ta).MustSend("try to escape")
	got := strings.Join(rec.Messages(), "")
	for _, attempt := range []string{"read ../outside.txt: refused", "read /etc/hostname: refused", "read link.txt: refused", "write ../escaped.txt: refused"} {
		if !strings.Contains(got, attempt) {
			t.Errorf("reply lacks %q:\n%s", attempt, got)
		}
	}
	if strings.Contains(got, "secret outside") || strings.Contains(got, "allowed") {
		t.Errorf("something got out:\n%s", got)
	}
	if !strings.Contains(got, "outside the workspace") {
		t.Errorf("the refusals do not say why:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(base, "escaped.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("escaped.txt was written: %v", err)
	}
}

func TestAFormIsAnsweredTypedOrDeclined(t *testing.T) {
	ta := startAgent(t)
	c := backendtest.NewConvo(t, ta)
	c.LiveAnswer = func(q domain.Question) domain.Resolution {
		if q.Message != "Which branch should I use?" || len(q.Fields) != 3 || !q.Live {
			t.Errorf("form question = %+v", q)
		}
		return domain.Resolution{Outcome: domain.Answered, Values: map[string]any{"branch": "main", "budget": int64(7), "urgent": true}, At: time.Now()}
	}
	rec := c.MustSend("elicit something")
	if got := strings.Join(rec.Messages(), ""); got != "Got branch main, budget 7 (number), urgent true." {
		t.Errorf("reply = %q", got)
	}
	c.LiveAnswer = func(domain.Question) domain.Resolution {
		return domain.Resolution{Outcome: domain.Declined, At: time.Now()}
	}
	rec = c.MustSend("elicit again")
	if got := strings.Join(rec.Messages(), ""); got != "You declined, so I stop here." {
		t.Errorf("reply = %q", got)
	}
}

func TestStopDuringALongReplyCancelsTheTurnAndKeepsTheSession(t *testing.T) {
	ta := startAgent(t)
	c := backendtest.NewConvo(t, ta)
	ctx, cancel := context.WithCancelCause(context.Background())
	c.Ctx = ctx
	c.OnText = func(sofar string) {
		if strings.Count(sofar, "word") >= 5 {
			cancel(domain.ErrStopped)
		}
	}
	_, err := c.Send("a long answer")
	if !errors.Is(err, domain.ErrStopped) {
		t.Fatalf("err = %v, want the stop", err)
	}
	waitFor(t, "the agent to get session/cancel", func() bool { return len(ta.events(t, "cancel")) == 1 })
	// The session goes on: the next message is served by the same process and session.
	c.Ctx, c.OnText = context.Background(), nil
	rec := c.MustSend("hello again")
	if got := strings.Join(rec.Messages(), ""); got != "Hello from the test agent." {
		t.Errorf("reply = %q", got)
	}
	if n, s := len(ta.events(t, "start")), len(ta.events(t, "new")); n != 1 || s != 1 {
		t.Errorf("%d processes, %d sessions; want one of each", n, s)
	}
}

func TestStopDuringAPermissionQuestionCancelsIt(t *testing.T) {
	ta := startAgent(t)
	c := backendtest.NewConvo(t, ta)
	ctx, cancel := context.WithCancelCause(context.Background())
	c.Ctx = ctx
	c.LiveAnswer = func(domain.Question) domain.Resolution {
		// The person presses Stop while the question waits: the runner's Await then ends
		// with the step, the question expired.
		cancel(domain.ErrStopped)
		return domain.Resolution{Outcome: domain.Expired, Reason: "The run was stopped.", At: time.Now()}
	}
	if _, err := c.Send("edit"); !errors.Is(err, domain.ErrStopped) {
		t.Fatalf("err = %v, want the stop", err)
	}
	perms := ta.events(t, "permission")
	if len(perms) != 1 || !strings.Contains(string(perms[0].Outcome), `"outcome":"cancelled"`) {
		t.Errorf("permission answers = %+v", perms)
	}
	if _, err := os.Stat(filepath.Join(ta.dir, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("notes.txt was written: %v", err)
	}
	var last domain.ToolCall
	for _, ev := range c.History {
		if ev.Kind == domain.EventToolCall && ev.ToolCall.Tool == "Edit notes.txt" {
			last = *ev.ToolCall
		}
	}
	if last.Status != domain.ToolFailed || !strings.Contains(last.Error, "Not run: the permission request ended unanswered") {
		t.Errorf("the card ends %s %q, want failed, not run", last.Status, last.Error)
	}
}

func TestAnAgentThatIgnoresCancelIsEndedAndTheNextMessageGetsAnother(t *testing.T) {
	ta := startAgent(t)
	c := backendtest.NewConvo(t, ta)
	ctx, cancel := context.WithCancelCause(context.Background())
	c.Ctx = ctx
	c.OnText = func(sofar string) {
		if strings.Contains(sofar, "more 3 ") {
			cancel(domain.ErrStopped)
		}
	}
	stopped := time.Now()
	if _, err := c.Send("be stubborn"); !errors.Is(err, domain.ErrStopped) {
		t.Fatalf("err = %v, want the stop", err)
	}
	if took := time.Since(stopped); took > 10*time.Second {
		t.Errorf("the stop took %s", took)
	}
	// At once, as a new message right after Stop does: a new process serves it.
	c.Ctx, c.OnText = context.Background(), nil
	rec := c.MustSend("hello")
	if got := strings.Join(rec.Messages(), ""); got != "Hello from the test agent." {
		t.Errorf("reply = %q", got)
	}
	if n := len(ta.events(t, "start")); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
}

func TestAFailingAgentSaysWhy(t *testing.T) {
	ta := startAgent(t)
	c := backendtest.NewConvo(t, ta)
	if _, err := c.Send("fail now"); err == nil || !strings.Contains(err.Error(), "the model is overloaded") || !strings.HasPrefix(err.Error(), "Coding agent: ") {
		t.Errorf("err = %v", err)
	}
	rec, err := c.Send("refuse this")
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("err = %v", err)
	}
	if got := strings.Join(rec.Messages(), ""); got != "I can't help with that." {
		t.Errorf("the refusal's words = %q", got)
	}
	// The agent dies mid-reply: the error says so, and the next message starts a new
	// process and session, given the conversation so far.
	_, err = c.Send("die please")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("err = %v", err)
	}
	rec = c.MustSend("recall")
	if got := strings.Join(rec.Messages(), ""); got != "Earlier prompts: none" {
		t.Errorf("reply = %q", got)
	}
	if !slices.ContainsFunc(rec.Events, func(ev domain.Event) bool {
		return ev.Kind == domain.EventToolCall && ev.ToolCall.Tool == "New session" && strings.Contains(ev.ToolCall.Notes[0], "earlier session ended")
	}) {
		t.Errorf("no card says a new session started")
	}
	prompts := ta.events(t, "prompt")
	last := prompts[len(prompts)-1].Text
	if !strings.Contains(last, "Person: fail now") || !strings.Contains(last, "You: I can't help with that.") || !strings.HasSuffix(last, "recall") {
		t.Errorf("the new session was not given the conversation so far: %q", last)
	}
	if n := len(ta.events(t, "start")); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
}

func TestARestartLoadsTheSessionWhereTheAgentCan(t *testing.T) {
	sessions := t.TempDir()
	ta := startAgent(t, func(c *acp.Config) { c.Env["ACP_TEST_SESSIONS"] = sessions })
	c := backendtest.NewConvo(t, ta)
	c.MustSend("hello there")
	ta.restart(t)
	rec := c.MustSend("recall")
	if got := strings.Join(rec.Messages(), ""); got != "Earlier prompts: hello there" {
		t.Errorf("reply = %q", got)
	}
	if n := len(ta.events(t, "load")); n != 1 {
		t.Errorf("%d loads, want 1", n)
	}
	if n := len(ta.events(t, "new")); n != 1 {
		t.Errorf("%d new sessions, want 1", n)
	}
}

func TestAnIdleProcessEndsAndTheNextMessageStartsAnother(t *testing.T) {
	ta := startAgent(t, func(c *acp.Config) { c.IdleAfter = 100 * time.Millisecond })
	c := backendtest.NewConvo(t, ta)
	c.MustSend("hello")
	waitFor(t, "the idle process to end", func() bool { return len(ta.events(t, "exit")) == 1 })
	pid := ta.events(t, "start")[0].PID
	waitFor(t, "the process to be gone", func() bool { return !alive(pid) })
	c.MustSend("hello")
	if n := len(ta.events(t, "start")); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
}

func TestConversationsAtOnceHaveProcessesOfTheirOwn(t *testing.T) {
	ta := startAgent(t)
	const n = 4
	var wg sync.WaitGroup
	replies := make([]string, n)
	for i := range n {
		wg.Go(func() {
			c := backendtest.NewConvo(t, ta)
			c.ID = int64(i + 1)
			c.LiveAnswer = choose(t, "Reject")
			msgs := []string{"markdown", "plan", "edit", "hello"}
			rec, err := c.Send(msgs[i])
			if err != nil {
				t.Errorf("conversation %d: %v", i+1, err)
				return
			}
			replies[i] = strings.Join(rec.Messages(), "")
		})
	}
	wg.Wait()
	if !strings.HasPrefix(replies[0], "# Result") || replies[1] != "Plan made." || replies[2] != "I left notes.txt alone." || replies[3] != "Hello from the test agent." {
		t.Errorf("replies = %q", replies)
	}
	pids := map[int]bool{}
	for _, l := range ta.events(t, "start") {
		pids[l.PID] = true
	}
	if len(pids) != n {
		t.Errorf("%d processes for %d conversations", len(pids), n)
	}
}

func TestAConversationWaitsVisiblyForAFreeProcess(t *testing.T) {
	ta := startAgent(t, func(c *acp.Config) { c.MaxSessions = 1 })
	first := backendtest.NewConvo(t, ta)
	answer := make(chan struct{})
	asked := make(chan struct{})
	first.LiveAnswer = func(q domain.Question) domain.Resolution {
		close(asked)
		<-answer
		return choose(t, "Reject")(q)
	}
	done := make(chan error, 1)
	go func() {
		_, err := first.Send("edit")
		done <- err
	}()
	<-asked
	second := backendtest.NewConvo(t, ta)
	second.ID = 2
	var rec *backendtest.Recorder
	secondDone := make(chan error, 1)
	go func() {
		var err error
		rec, err = second.Send("hello")
		secondDone <- err
	}()
	select {
	case err := <-secondDone:
		t.Fatalf("the second conversation did not wait: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(answer)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-secondDone; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.Messages(), ""); got != "Hello from the test agent." {
		t.Errorf("reply = %q", got)
	}
	var states []string
	for _, ev := range rec.Events {
		if ev.Kind == domain.EventToolCall && ev.ToolCall.Tool == "Waiting for the agent" {
			states = append(states, string(ev.ToolCall.Status)+":"+ev.ToolCall.Waiting)
		}
	}
	if !slices.Equal(states, []string{"waiting:a free process of the agent (all 1 are in use)", "done:"}) {
		t.Errorf("the wait showed as %q", states)
	}
	// A third conversation that stops while it waits: its card says the wait ended.
	busy := backendtest.NewConvo(t, ta)
	busy.ID = 3
	blocked := make(chan struct{})
	release := make(chan struct{})
	busy.LiveAnswer = func(q domain.Question) domain.Resolution {
		close(blocked)
		<-release
		return choose(t, "Reject")(q)
	}
	busyDone := make(chan struct{})
	go func() { defer close(busyDone); _, _ = busy.Send("edit") }()
	<-blocked
	waiter := backendtest.NewConvo(t, ta)
	waiter.ID = 4
	ctx, stop := context.WithCancelCause(context.Background())
	waiter.Ctx = ctx
	time.AfterFunc(200*time.Millisecond, func() { stop(domain.ErrStopped) })
	rec4, err := waiter.Send("hello")
	close(release)
	<-busyDone
	if !errors.Is(err, domain.ErrStopped) {
		t.Errorf("err = %v, want the stop", err)
	}
	var last domain.ToolCall
	for _, ev := range rec4.Events {
		if ev.Kind == domain.EventToolCall {
			last = *ev.ToolCall
		}
	}
	if last.Tool != "Waiting for the agent" || last.Status != domain.ToolFailed || !strings.Contains(last.Error, "The wait ended") {
		t.Errorf("the wait's card ends %+v", last)
	}
	// The first conversation's idle process made room: one ran at a time.
	starts := ta.events(t, "start")
	if len(starts) < 2 {
		t.Fatalf("%d processes started, want 2 or more", len(starts))
	}
	if alive(starts[0].PID) {
		t.Errorf("the first conversation's process still runs beside the others")
	}
}

func TestCloseEndsEveryProcess(t *testing.T) {
	ta := startAgent(t)
	for i := range 3 {
		c := backendtest.NewConvo(t, ta)
		c.ID = int64(i + 1)
		c.MustSend("hello")
	}
	starts := ta.events(t, "start")
	if len(starts) != 3 {
		t.Fatalf("%d processes", len(starts))
	}
	ta.Close()
	for _, s := range starts {
		if alive(s.PID) {
			t.Errorf("process %d outlived Close", s.PID)
		}
	}
}

func TestAnAgentThatDoesNotStartSaysWhyAndHoldsNoSlot(t *testing.T) {
	ta := startAgent(t, func(c *acp.Config) {
		c.Args = []string{"-e", "console.error('GEMINI_API_KEY is not set'); process.exit(2)"}
		c.MaxSessions = 1
	})
	for range 3 { // with one process at most, a slot held by a dead start would hang the next
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c := backendtest.NewConvo(t, ta)
		c.Ctx = ctx
		_, err := c.Send("hello")
		cancel()
		if err == nil || !strings.Contains(err.Error(), "could not start the agent") || !strings.Contains(err.Error(), "GEMINI_API_KEY is not set") {
			t.Fatalf("err = %v", err)
		}
	}
	if p := ta.Problems(); len(p) != 1 || !strings.Contains(p[0], "GEMINI_API_KEY is not set") {
		t.Errorf("problems = %q", p)
	}
}

func TestAttachedFilesReachTheAgentAsItTakesThem(t *testing.T) {
	docs := func() []domain.Document {
		return []domain.Document{
			{DocumentRef: domain.DocumentRef{Name: "build.log", MimeType: "text/plain", Label: domain.LabelUpload}, Content: []byte("error: missing semicolon\n")},
			{DocumentRef: domain.DocumentRef{Name: "shot.png", MimeType: "image/png", Label: domain.LabelUpload}, Content: []byte("\x89PNG\r\n\x1a\nfake")},
			{DocumentRef: domain.DocumentRef{Name: "data.bin", MimeType: "application/octet-stream", Label: domain.LabelUpload}, Content: []byte{0, 1, 2}},
		}
	}
	type block struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
		Resource struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"resource"`
	}
	lastBlocks := func(ta *testAgent) []block {
		f, err := os.ReadFile(ta.log)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []block
		for _, line := range strings.Split(strings.TrimSpace(string(f)), "\n") {
			var l struct {
				Event  string  `json:"event"`
				Blocks []block `json:"blocks"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Event == "prompt" {
				blocks = l.Blocks
			}
		}
		return blocks
	}

	ta := startAgent(t)
	rec, _, err := backendtest.NewConvo(t, ta).SendWithDocuments("hello, see the files", "", docs()...)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.Messages(), ""); got != "Hello from the test agent." {
		t.Errorf("reply = %q", got)
	}
	b := lastBlocks(ta)
	if len(b) != 4 || b[0].Text != "hello, see the files" ||
		b[1].Type != "resource" || b[1].Resource.Text != "error: missing semicolon\n" || !strings.HasSuffix(b[1].Resource.URI, "/build.log") ||
		b[2].Type != "image" || b[2].MimeType != "image/png" || b[2].Data == "" ||
		b[3].Type != "text" || !strings.Contains(b[3].Text, "data.bin") || !strings.Contains(b[3].Text, "takes no files of this type") {
		t.Errorf("prompt blocks = %+v", b)
	}

	// An agent that takes no embedded context gets the text in a fenced block; no image.
	plain := startAgent(t, func(c *acp.Config) { c.Env["ACP_TEST_PLAIN_PROMPT"] = "1" })
	if _, _, err := backendtest.NewConvo(t, plain).SendWithDocuments("hello", "", docs()...); err != nil {
		t.Fatal(err)
	}
	b = lastBlocks(plain)
	if len(b) != 4 || b[1].Type != "text" || !strings.Contains(b[1].Text, "The person attached build.log:\n\n```\nerror: missing semicolon\n```") ||
		b[2].Type != "text" || !strings.Contains(b[2].Text, "shot.png") {
		t.Errorf("prompt blocks = %+v", b)
	}
}

func TestAnAgentThatNeverOpensASessionIsEndedWithTheReason(t *testing.T) {
	ta := startAgent(t, func(c *acp.Config) {
		c.Env["ACP_TEST_HANG_NEW"] = "1"
		c.StartTimeout = 3 * time.Second // node starting on a busy machine must answer initialize
	})
	c := backendtest.NewConvo(t, ta)
	_, err := c.Send("hello")
	if err == nil || !strings.Contains(err.Error(), "the agent did not open a session within 3s") {
		t.Fatalf("err = %v", err)
	}
	pid := ta.events(t, "start")[0].PID
	waitFor(t, "the stuck process to end", func() bool { return !alive(pid) })
}

func TestASilentTurnIsCancelledButAWaitForThePersonIsNotSilence(t *testing.T) {
	ta := startAgent(t, func(c *acp.Config) { c.IdleTimeout = 500 * time.Millisecond })
	c := backendtest.NewConvo(t, ta)
	_, err := c.Send("stay silent")
	if err == nil || !strings.Contains(err.Error(), "the agent sent nothing for 500ms; its turn was cancelled") {
		t.Fatalf("err = %v", err)
	}
	if n := len(ta.events(t, "cancel")); n != 1 {
		t.Errorf("%d cancels, want 1", n)
	}
	// A permission question that waits longer than that is the person's time, not silence.
	c.LiveAnswer = func(q domain.Question) domain.Resolution {
		time.Sleep(1500 * time.Millisecond)
		return choose(t, "Allow")(q)
	}
	rec := c.MustSend("edit")
	if got := strings.Join(rec.Messages(), ""); got != "I changed notes.txt." {
		t.Errorf("reply = %q", got)
	}
	if n := len(ta.events(t, "start")); n != 1 {
		t.Errorf("%d processes, want the one", n)
	}
}

// With {person} in cwd, each person's conversations work in a folder of their own, made
// with mode 0700 the first time: two people at once never share one, and the agent's file
// requests stay in the person's own.
func TestEachPersonWorksInTheirOwnWorkspace(t *testing.T) {
	var base string
	ta := startAgent(t, func(c *acp.Config) {
		base = filepath.Dir(c.Cwd)
		c.Cwd = filepath.Join(base, "people", "{person}")
		if err := os.Mkdir(filepath.Join(base, "people"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	if d := ta.Info().Description; !strings.Contains(d, "a folder of your own under "+filepath.Join(base, "people")) {
		t.Errorf("description %q", d)
	}
	people := []string{"ann", "bob", "ann.smith@example.com"}
	var wg sync.WaitGroup
	for i, who := range people {
		wg.Go(func() {
			c := backendtest.NewConvo(t, ta)
			c.ID, c.Person = int64(i+1), who
			c.LiveAnswer = choose(t, "Allow")
			rec, err := c.Send("Please edit the notes")
			if err != nil {
				t.Errorf("%s: %v", who, err)
				return
			}
			if got := strings.Join(rec.Messages(), ""); got != "I changed notes.txt." {
				t.Errorf("%s's reply = %q", who, got)
			}
		})
	}
	wg.Wait()
	for _, who := range people {
		dir := filepath.Join(base, "people", who)
		st, err := os.Stat(dir)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s's workspace: %v, %v; want a folder of mode 0700", who, st, err)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "hello from the agent\n" {
			t.Errorf("%s's notes.txt = %q, %v: the edit of another's session reached it", who, b, err)
		}
	}
	cwds := map[string]bool{}
	for _, l := range ta.events(t, "new") {
		cwds[l.Cwd] = true
	}
	if len(cwds) != len(people) {
		t.Errorf("sessions opened in %d folders for %d people: %v", len(cwds), len(people), cwds)
	}
	// A conversation with nobody's name gets no workspace of its own, and no one else's.
	c := backendtest.NewConvo(t, ta)
	c.ID = 9
	if _, err := c.Send("hello"); err == nil || !strings.Contains(err.Error(), "cannot name a workspace") {
		t.Errorf("no person: %v", err)
	}
}

func TestPersonInCwdIsAWholeElement(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ cwd, want string }{
		{filepath.Join(dir, "work-{person}"), "whole path element"},
		{filepath.Join(dir, "{person}", "{person}"), "whole path element"},
		{filepath.Join(dir, "missing", "{person}"), "cwd: stat"},
	} {
		_, err := acp.New(acp.Config{Name: "coder", Command: "true", Cwd: tt.cwd})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("cwd %s: %v, want %q", tt.cwd, err, tt.want)
		}
	}
	if _, err := acp.New(acp.Config{Name: "coder", Command: "true", Cwd: filepath.Join(dir, "{person}", "repo")}); err != nil {
		t.Errorf("a person's folder with a repo in it: %v", err)
	}
}
