package a2a_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"github.com/parley-chat/parley/backend/a2a"
	"github.com/parley-chat/parley/domain"
)

func TestAgent_Info(t *testing.T) {
	t.Run("FromCard", func(t *testing.T) {
		r := newRemote(t)
		info := r.agent().Info()
		if info.Name != "platform" || info.Title != "Platform Engineer" {
			t.Errorf("got name %q title %q, want platform / Platform Engineer", info.Name, info.Title)
		}
		for _, want := range []string{"Runs platform chores.", "Skills:", "- Create pull requests: Opens a PR on GitHub.", "- Jira issues"} {
			if !strings.Contains(info.Description, want) {
				t.Errorf("description %q lacks %q", info.Description, want)
			}
		}
	})
	t.Run("OperatorTitleWins", func(t *testing.T) {
		r := newRemote(t)
		if got := r.agent(func(c *a2a.Config) { c.Title = "Platform" }).Info().Title; got != "Platform" {
			t.Errorf("got title %q, want Platform", got)
		}
	})
	t.Run("CardURL", func(t *testing.T) {
		r := newRemote(t)
		a := r.agent(func(c *a2a.Config) { c.CardURL = r.srv.URL + "/.well-known/agent-card.json" })
		if got := a.Info().Title; got != "Platform Engineer" {
			t.Errorf("got title %q, want the card's name", got)
		}
	})
}

func TestAgent_Streaming(t *testing.T) {
	r := newRemote(t, turn{
		working("Looking up the cluster"),
		partial("The cluster "),
		partial("has three "),
		partial("nodes."),
		final(sdk.TextPart{Text: "The cluster has three nodes."}),
		completed(),
	})
	c := newConvo(t, r.agent())
	rec := c.MustSend("How many nodes?")

	if len(rec.Deltas) < 3 {
		t.Errorf("got %d text deltas %q, want the partial results streamed", len(rec.Deltas), rec.Deltas)
	}
	if got := rec.Messages(); len(got) != 1 || got[0] != "The cluster has three nodes." {
		t.Errorf("got messages %q, want the answer once", got)
	}
	plans := rec.Plans()
	if len(plans) == 0 || plans[0].Steps[0].Title != "Looking up the cluster" {
		t.Fatalf("got plans %+v, want the status as progress", plans)
	}
	if last := plans[len(plans)-1].Steps[0]; last.Status != domain.StepDone {
		t.Errorf("got last step %+v, want done", last)
	}
	cp := rec.LastCheckpoint()
	if cp["task_id"] == "" || cp["context_id"] == "" || cp["state"] != "completed" || cp["sent"] != float64(1) {
		t.Errorf("got checkpoint %v, want task, context, completed, sent 1", cp)
	}

	// A second message starts a new task in the same context.
	r.mu.Lock()
	r.turns = append(r.turns, turn{final(sdk.TextPart{Text: "Still three."}), completed()})
	r.mu.Unlock()
	rec = c.MustSend("And now?")
	if got := rec.Messages(); len(got) != 1 || got[0] != "Still three." {
		t.Errorf("got messages %q, want Still three.", got)
	}
	got := r.received()
	if got[1].contextID != got[0].contextID || !got[1].newTask {
		t.Errorf("second message went to task %q context %q, want a new task in context %q", got[1].taskID, got[1].contextID, got[0].contextID)
	}
}

func TestAgent_FinalInChunks(t *testing.T) {
	r := newRemote(t, turn{
		partial("Three "),
		finalChunk("Three nodes, ", false),
		finalChunk("all ready.", false),
		completed(),
	})
	rec := newConvo(t, r.agent()).MustSend("How many nodes?")
	if got := rec.Messages(); len(got) != 1 || got[0] != "Three nodes, all ready." {
		t.Errorf("got messages %q, want the chunked result once", got)
	}
}

func TestAgent_StructuredFinal(t *testing.T) {
	r := newRemote(t, turn{
		partial("I can "),
		final(sdk.DataPart{Data: map[string]any{"is_task_complete": true, "require_user_input": false, "content": "I can help with PRs.", "metadata": nil}}),
		completed(),
	})
	rec := newConvo(t, r.agent()).MustSend("how can you help?")
	if got := rec.Messages(); len(got) != 1 || got[0] != "I can help with PRs." {
		t.Errorf("got messages %q, want the DataPart's content once", got)
	}
}

func TestAgent_InputRequired(t *testing.T) {
	r := newRemote(t,
		turn{
			partial("Let me prepare the PR."),
			status(sdk.TaskStateInputRequired, branchForm("Which branch should the PR come from?")),
		},
		turn{
			status(sdk.TaskStateInputRequired, sdk.TextPart{Text: "Branch 'x' does not exist."}, branchForm("Which branch should the PR come from?")),
		},
		turn{
			final(sdk.TextPart{Text: "Opened PR #7 from feature/login."}),
			completed(),
		},
	)
	c := newConvo(t, r.agent())
	rec := c.MustSend("Open a PR")
	q := onlyQuestion(t, rec)
	if q.Message != "Which branch should the PR come from?" || len(q.Fields) != 2 || q.Fields[0].Name != "branch" || q.Fields[1].Kind != domain.KindSelect {
		t.Fatalf("got question %+v, want the DataPart's form", q)
	}
	if got := rec.Messages(); len(got) != 1 || got[0] != "Let me prepare the PR." {
		t.Errorf("got messages %q, want the streamed text before the form", got)
	}
	cp := rec.LastCheckpoint()
	if cp["state"] != "input-required" || q.Key != cp["task_id"] || !q.AllowCancel {
		t.Errorf("got checkpoint %v and question key %q, want input-required under the task id", cp, q.Key)
	}

	// A bad answer: the agent asks again, saying why.
	c.Answer(q, form("branch", "x", "base", "main"))
	rec = c.MustResume()
	msgs := r.received()
	first, answer := msgs[0], msgs[1]
	if answer.msg.TaskID != first.taskID || answer.msg.ContextID != first.contextID || answer.newTask {
		t.Errorf("answer went to task %q context %q, want task %q context %q", answer.msg.TaskID, answer.msg.ContextID, first.taskID, first.contextID)
	}
	var text string
	var data map[string]any
	for _, p := range answer.msg.Parts {
		switch p := p.(type) {
		case sdk.TextPart:
			text = p.Text
		case sdk.DataPart:
			data = p.Data
		}
	}
	if !strings.Contains(text, "branch: x") || !strings.Contains(text, "base: main") {
		t.Errorf("got answer text %q, want the values rendered", text)
	}
	values, _ := data["values"].(map[string]any)
	if data["outcome"] != "answered" || values["branch"] != "x" || values["base"] != "main" {
		t.Errorf("got answer data %v, want outcome and values", data)
	}
	q2 := onlyQuestion(t, rec)
	if q2.ID == q.ID || q2.Fields[0].Name != "branch" {
		t.Errorf("got question %+v, want a new question", q2)
	}
	if got := rec.Messages(); len(got) != 1 || got[0] != "Branch 'x' does not exist." {
		t.Errorf("got messages %q, want why the agent asks again", got)
	}

	c.Answer(q2, form("branch", "feature/login", "base", "main"))
	rec = c.MustResume()
	if got := rec.Messages(); len(got) != 1 || got[0] != "Opened PR #7 from feature/login." {
		t.Errorf("got messages %q, want the result", got)
	}
	if len(rec.Questions()) != 0 {
		t.Errorf("got questions %+v, want none", rec.Questions())
	}
	if got := r.received(); len(got) != 3 || got[2].taskID != first.taskID || got[2].newTask {
		t.Errorf("got %d messages, the last to task %q; want 3 to task %q", len(got), got[len(got)-1].taskID, first.taskID)
	}
}

func TestAgent_TextForm(t *testing.T) {
	formText := `UserInputMetaData: {"require_user_input": true, "content": "Pick a priority.", "metadata": {"input_fields": [{"name": "priority", "type": "select", "required": true, "options": ["low", "high"]}]}}`
	r := newRemote(t,
		turn{
			partial("Creating the issue.\n"),
			partial(formText[:20]),
			partial(formText[20:]),
			final(sdk.TextPart{Text: "Creating the issue.\n" + formText}),
			status(sdk.TaskStateInputRequired, sdk.TextPart{Text: formText}),
		},
		turn{final(sdk.TextPart{Text: "Created JIRA-1."}), completed()},
	)
	c := newConvo(t, r.agent())
	rec := c.MustSend("File an issue")
	q := onlyQuestion(t, rec)
	if q.Message != "Pick a priority." || q.Fields[0].Name != "priority" {
		t.Errorf("got question %+v, want the text form", q)
	}
	for _, d := range rec.Deltas {
		if strings.Contains(d, "UserInput") || strings.Contains(d, "{") {
			t.Errorf("the form's text was streamed: %q", d)
		}
	}
	c.Answer(q, form("priority", "high"))
	if got := c.MustResume().Messages(); len(got) != 1 || got[0] != "Created JIRA-1." {
		t.Errorf("got messages %q", got)
	}
}

func TestAgent_InputRequiredWithoutForm(t *testing.T) {
	r := newRemote(t,
		turn{status(sdk.TaskStateInputRequired, sdk.TextPart{Text: "Which cluster do you mean?"})},
		turn{final(sdk.TextPart{Text: "Scaled prod."}), completed()},
	)
	c := newConvo(t, r.agent())
	q := onlyQuestion(t, c.MustSend("Scale it"))
	if q.Message != "Which cluster do you mean?" || len(q.Fields) != 1 || q.Fields[0].Kind != domain.KindTextarea {
		t.Fatalf("got question %+v, want one textarea with the status text", q)
	}
	c.Answer(q, form("answer", "prod"))
	c.MustResume()
	if got := r.received()[1].msg.Parts[0].(sdk.TextPart).Text; !strings.Contains(got, "answer: prod") {
		t.Errorf("got answer text %q", got)
	}
}

func TestAgent_Decline(t *testing.T) {
	r := newRemote(t,
		turn{status(sdk.TaskStateInputRequired, branchForm("Which branch?"))},
		turn{final(sdk.TextPart{Text: "OK, I stopped."}), completed()},
	)
	c := newConvo(t, r.agent())
	q := onlyQuestion(t, c.MustSend("Open a PR"))
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Declined, Reason: "not today"})
	rec := c.MustResume()
	got := r.received()[1]
	if got.taskID != r.received()[0].taskID || got.newTask || got.msg.Parts[0].(sdk.TextPart).Text != "The person declined: not today" {
		t.Errorf("got %+v, want the decline in the same task", got)
	}
	if d := got.msg.Parts[1].(sdk.DataPart).Data; d["outcome"] != "declined" || d["reason"] != "not today" {
		t.Errorf("got data %v", d)
	}
	if m := rec.Messages(); len(m) != 1 || m[0] != "OK, I stopped." {
		t.Errorf("got messages %q", m)
	}
}

func TestAgent_Cancel(t *testing.T) {
	// The SDK's server sometimes refuses tasks/cancel while it is still closing the execution
	// that asked (a2a-go v0.3.3); the agent then tells the remote in a message, which the
	// second turn takes.
	r := newRemote(t, turn{status(sdk.TaskStateInputRequired, branchForm("Which branch?"))}, turn{status(sdk.TaskStateCanceled)})
	c := newConvo(t, r.agent())
	q := onlyQuestion(t, c.MustSend("Open a PR"))
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Cancelled})
	rec := c.MustResume()
	r.mu.Lock()
	cancels, told := r.cancels, len(r.got) > 1
	r.mu.Unlock()
	if told {
		return // the refused cancel was followed by the message: fine, and nothing more to check
	}
	// At least one: a tasks/cancel the SDK's server refused as busy (-32603) after its
	// executor had cancelled (seen on a loaded machine) is sent again, as it must be.
	if cancels < 1 {
		t.Errorf("got %d tasks/cancel, want at least 1", cancels)
	}
	if m := rec.Messages(); len(m) != 1 || m[0] != "You cancelled the task." {
		t.Errorf("got messages %q", m)
	}
	if cp := rec.LastCheckpoint(); cp["state"] != "canceled" || cp["delivered"] != float64(q.ID) {
		t.Errorf("got checkpoint %v", cp)
	}
	// A re-delivered resume does not cancel twice.
	c.Step--
	if _, err := c.Deliver(domain.TriggerResume); err == nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.cancels != cancels {
			t.Errorf("got %d tasks/cancel after a re-delivery, want %d: none more", r.cancels, cancels)
		}
	}
}

func TestAgent_AuthRequired(t *testing.T) {
	r := newRemote(t, turn{status(sdk.TaskStateAuthRequired,
		sdk.TextPart{Text: "I need access to your GitHub account."},
		sdk.DataPart{Data: map[string]any{"auth_url": "https://github.example/login/oauth", "password": "field"}})})
	rec := newConvo(t, r.agent()).MustSend("Open a PR")
	if len(rec.Questions()) != 0 {
		t.Errorf("got questions %+v, want none: never a credentials form", rec.Questions())
	}
	m := rec.Messages()
	if len(m) != 1 || !strings.Contains(m[0], "I need access to your GitHub account.") || !strings.Contains(m[0], "[Sign in](https://github.example/login/oauth)") {
		t.Errorf("got messages %q, want the agent's text and a link out", m)
	}
	if cp := rec.LastCheckpoint(); cp["state"] != "auth-required" {
		t.Errorf("got checkpoint %v", cp)
	}
}

func TestAgent_Resubscribe(t *testing.T) {
	release := make(chan struct{})
	r := newRemote(t, turn{
		working("Building"),
		partial("Step one done. "),
		waitFor(release),
		partial("Step two done."),
		final(sdk.TextPart{Text: "Step one done. Step two done."}),
		completed(),
	})
	c := newConvo(t, r.agent())
	ctx, cancel := context.WithCancel(context.Background())
	c.Ctx = ctx
	c.OnText = func(sofar string) {
		if strings.Contains(sofar, "Step one") {
			cancel() // Parley shuts down in the middle of the task.
		}
	}
	if _, err := c.Send("Build it"); err == nil {
		t.Fatal("got no error from a step cut off by shutdown")
	}
	taskID := r.received()[0].taskID

	// After the restart: a new agent, the same history; the task is still working.
	c.Agent, c.Ctx, c.OnText = r.agent(), context.Background(), nil
	for len(r.gets) > 0 {
		<-r.gets
	}
	go func() {
		for id := range r.gets {
			if id == taskID {
				close(release)
				return
			}
		}
	}()
	rec, err := c.Retry()
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if m := rec.Messages(); len(m) != 1 || m[0] != "Step one done. Step two done." {
		t.Errorf("got messages %q, want the caught-up result once", m)
	}
	if got := len(r.received()); got != 1 {
		t.Errorf("the remote got %d messages, want 1: resubscribing sends nothing", got)
	}
	if cp := rec.LastCheckpoint(); cp["state"] != "completed" {
		t.Errorf("got checkpoint %v", cp)
	}
}

func TestAgent_ReplyToEndedTask(t *testing.T) {
	r := newRemote(t,
		turn{status(sdk.TaskStateInputRequired, branchForm("Which branch?"))},
		turn{final(sdk.TextPart{Text: "Opened a PR from main."}), completed()},
	)
	c := newConvo(t, r.agent())
	q := onlyQuestion(t, c.MustSend("Open a PR"))
	first := r.received()[0]
	var taskID sdk.TaskID
	for _, ev := range c.History {
		if ev.Kind == domain.EventQuestionAsked {
			taskID = sdk.TaskID(ev.Question.Key)
		}
	}

	// Someone else ends the task while the question waits.
	client, err := a2aclient.NewFromCard(context.Background(), r.card(), a2aclient.WithJSONRPCTransport(nil))
	if err != nil {
		t.Fatal(err)
	}
	// The SDK's server refuses a cancel while it still winds up the request that asked: poll.
	for deadline := time.Now().Add(5 * time.Second); ; {
		_, err := client.CancelTask(context.Background(), &sdk.TaskIDParams{ID: taskID})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	c.Answer(q, form("branch", "main", "base", "main"))
	rec := c.MustResume()
	got := r.received()
	if len(got) != 2 || !got[1].newTask || got[1].contextID != first.contextID {
		t.Fatalf("got %d messages, the answer to task %q context %q; want a new task in context %q", len(got), got[len(got)-1].taskID, got[len(got)-1].contextID, first.contextID)
	}
	m := rec.Messages()
	if len(m) != 2 || !strings.Contains(m[0], "had already ended (canceled)") || m[1] != "Opened a PR from main." {
		t.Errorf("got messages %q, want a note and the result", m)
	}
}

// Parley's own A2A server sends a question twice, as a DataPart and as UserInputMetaData
// text: it is asked once.
func TestAgent_FormAsDataAndTextIsAskedOnce(t *testing.T) {
	form := domain.FormatUserInputMetaData(domain.Question{Message: "Which branch?", Fields: []domain.Field{{Name: "branch", Kind: domain.KindText, Required: true}}})
	r := newRemote(t,
		turn{status(sdk.TaskStateInputRequired, branchForm("Which branch should the PR come from?"), sdk.TextPart{Text: form})},
	)
	c := newConvo(t, r.agent())
	rec := c.MustSend("Open a PR")
	q := onlyQuestion(t, rec)
	if q.Fields[0].Name != "branch" {
		t.Fatalf("question = %+v", q)
	}
	for _, m := range rec.Messages() {
		if strings.Contains(m, "UserInputMetaData") {
			t.Errorf("the form text was shown: %q", m)
		}
	}
}

func TestAgent_StopCancelsTheTask(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	r := newRemote(t, turn{
		working("Building"),
		partial("Step one done. "),
		waitFor(release),
		partial("Step two done."),
		completed(),
	})
	c := newConvo(t, r.agent())
	ctx, stop := context.WithCancelCause(context.Background())
	c.Ctx = ctx
	c.OnText = func(sofar string) {
		if strings.Contains(sofar, "Step one") {
			stop(domain.ErrStopped) // the person clicks Stop
		}
	}
	rec, err := c.Send("Build it")
	if err == nil {
		t.Fatal("got no error from a stopped step")
	}
	r.mu.Lock()
	cancels := r.cancels
	r.mu.Unlock()
	if cancels != 1 {
		t.Errorf("got %d tasks/cancel, want 1: the remote agent stops working too", cancels)
	}
	if cp := rec.LastCheckpoint(); cp["state"] != "canceled" {
		t.Errorf("checkpoint %v, want the task canceled", cp)
	}
	if m := rec.Messages(); len(m) != 1 || m[0] != "Step one done. " {
		t.Errorf("messages %q, want the text so far kept", m)
	}
	// Retry asks again, in a new task.
	r.mu.Lock()
	r.turns = append(r.turns, turn{final(sdk.TextPart{Text: "Built."}), completed()})
	r.mu.Unlock()
	c.Ctx, c.OnText = context.Background(), nil
	rec, err = c.Retry()
	if err != nil {
		t.Fatal(err)
	}
	if got := r.received(); len(got) != 2 || !got[1].newTask {
		t.Errorf("the retry went into %+v, want a new task", got[len(got)-1])
	}
	if m := rec.Messages(); len(m) != 1 || m[0] != "Built." {
		t.Errorf("after the retry %q", m)
	}
}

// A regenerated reply is a new version of the conversation: the agent gets the person's
// message again in a new task of the same context, even when the message went into a task
// that waited for input; that task is left as it was.
func TestAgent_RegenerateStartsANewTask(t *testing.T) {
	r := newRemote(t,
		turn{status(sdk.TaskStateInputRequired, sdk.TextPart{Text: "Which branch?"})},
		turn{final(sdk.TextPart{Text: "Opened a PR from main."}), completed()},
		turn{final(sdk.TextPart{Text: "Opened a PR from main, again."}), completed()},
	)
	c := newConvo(t, r.agent())
	c.MustSend("Open a PR")
	c.MustSend("from main") // into the task that waits for it
	got := r.received()
	if len(got) != 2 || got[1].newTask || got[1].taskID != got[0].taskID {
		t.Fatalf("the reply went to task %q (new %v), want task %q", got[len(got)-1].taskID, got[len(got)-1].newTask, got[0].taskID)
	}
	rec, err := c.Regenerate()
	if err != nil {
		t.Fatal(err)
	}
	got = r.received()
	if len(got) != 3 || !got[2].newTask || got[2].contextID != got[0].contextID || got[2].msg.Parts[0].(sdk.TextPart).Text != "from main" {
		t.Fatalf("the regenerated message went to task %q (new %v) context %q, want a new task in context %q", got[2].taskID, got[2].newTask, got[2].contextID, got[0].contextID)
	}
	if m := rec.Messages(); len(m) != 1 || m[0] != "Opened a PR from main, again." {
		t.Errorf("got messages %q", m)
	}
}

// The main flows hold as well with an agent that speaks A2A v1.0: each call goes out as
// v1.0, and each event of its streams is read back as v0.3, once.
func TestAgent_V1(t *testing.T) {
	for _, tt := range []struct {
		name string
		test func(*testing.T)
	}{
		{"Streaming", TestAgent_Streaming},
		{"FinalInChunks", TestAgent_FinalInChunks},
		{"InputRequired", TestAgent_InputRequired},
		{"Cancel", TestAgent_Cancel},
		{"Resubscribe", TestAgent_Resubscribe},
		{"Documents", TestAgent_Documents},
	} {
		t.Run(tt.name, func(t *testing.T) {
			remoteV1 = true
			defer func() { remoteV1 = false }()
			tt.test(t)
		})
	}
}
