package a2a_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-chat/parley/agent"
)

// recorder is an agent.Output that keeps what a step reported as the events the runner
// would store: a finished message starting with UserInputMetaData: becomes a question, a
// question gets the next id, secret fields are refused.
type recorder struct {
	t      *testing.T
	author string
	nextID *int64

	text   strings.Builder
	open   bool
	deltas []string
	events []agent.Event
	// onText, when set, runs after every Text call (to cut a step mid-stream).
	onText func(sofar string)
}

func (r *recorder) Text(delta string) error {
	if delta == "" {
		return nil
	}
	r.open = true
	r.text.WriteString(delta)
	r.deltas = append(r.deltas, delta)
	if r.onText != nil {
		r.onText(r.text.String())
	}
	return nil
}

func (r *recorder) EndMessage() error {
	if !r.open {
		return nil
	}
	text := r.text.String()
	r.text.Reset()
	r.open = false
	if q, _, _, ok := agent.SplitUserInputMetaData(text); ok {
		// The runner would ask this itself: the back end should never let it come to that.
		r.t.Errorf("a UserInputMetaData form reached the runner as text: %q", q.Message)
	}
	r.events = append(r.events, agent.Event{Kind: agent.EventAgentMessage, Text: text, Author: r.author})
	return nil
}

// interrupt closes a message left open, as the store does when a step ends without ending it.
func (r *recorder) interrupt() {
	if r.open {
		r.events = append(r.events, agent.Event{Kind: agent.EventAgentMessage, Text: r.text.String(), Author: r.author, Interrupted: true})
		r.open = false
		r.text.Reset()
	}
}

func (r *recorder) As(author string) { r.author = author }

func (r *recorder) Plan(p agent.Plan) error {
	r.events = append(r.events, agent.Event{Kind: agent.EventPlan, Plan: &p})
	return nil
}

func (r *recorder) Ask(q agent.Question) (int64, error) {
	r.t.Helper()
	if err := r.EndMessage(); err != nil {
		return 0, err
	}
	if q.Asker == "" {
		q.Asker = r.author
	}
	q = agent.RefuseSecrets(q)
	if err := q.Check(); err != nil {
		r.t.Fatalf("invalid question %q: %v", q.Message, err)
	}
	*r.nextID++
	q.ID = *r.nextID
	r.events = append(r.events, agent.Event{Kind: agent.EventQuestionAsked, Question: &q})
	return q.ID, nil
}

func (r *recorder) Checkpoint(state any) error {
	b, err := json.Marshal(state)
	if err != nil {
		return err
	}
	r.events = append(r.events, agent.Event{Kind: agent.EventCheckpoint, Checkpoint: b})
	return nil
}

// messages returns the finished agent messages of the step.
func (r *recorder) messages() []string {
	var out []string
	for _, ev := range r.events {
		if ev.Kind == agent.EventAgentMessage {
			out = append(out, ev.Text)
		}
	}
	return out
}

// questions returns the questions the step asked.
func (r *recorder) questions() []agent.Question {
	var out []agent.Question
	for _, ev := range r.events {
		if ev.Kind == agent.EventQuestionAsked {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// plans returns the plans the step published.
func (r *recorder) plans() []agent.Plan {
	var out []agent.Plan
	for _, ev := range r.events {
		if ev.Kind == agent.EventPlan {
			out = append(out, *ev.Plan)
		}
	}
	return out
}

// checkpoint decodes the newest checkpoint of the step.
func (r *recorder) checkpoint() map[string]any {
	var cp map[string]any
	for _, ev := range r.events {
		if ev.Kind == agent.EventCheckpoint {
			cp = nil
			_ = json.Unmarshal(ev.Checkpoint, &cp)
		}
	}
	return cp
}

// convo drives an agent the way the runner and the store do: a message starts a run, a step
// that asked waits for its answers, a failed step supersedes its questions and can be retried.
type convo struct {
	t       *testing.T
	a       agent.Agent
	history []agent.Event
	run     int64
	step    int64
	ids     int64
	ctx     context.Context
	onText  func(string)
}

func newConvo(t *testing.T, a agent.Agent) *convo {
	t.Helper()
	return &convo{t: t, a: a, ctx: context.Background()}
}

// send records the person's message and runs a step on it.
func (c *convo) send(text string) (*recorder, error) {
	c.t.Helper()
	for _, q := range c.pending() {
		c.resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Superseded, Reason: "The person sent a new message instead of answering."})
	}
	c.run++
	c.history = append(c.history,
		agent.Event{Kind: agent.EventUserMessage, Text: text, Author: "person"},
		agent.Event{Kind: agent.EventRunState, State: agent.StateRunning})
	return c.stepNow(agent.TriggerMessage)
}

// resume runs the step that follows the answers.
func (c *convo) resume() (*recorder, error) {
	c.t.Helper()
	if p := c.pending(); len(p) > 0 {
		c.t.Fatalf("resume with %d questions pending", len(p))
	}
	c.history = append(c.history, agent.Event{Kind: agent.EventRunState, State: agent.StateRunning})
	return c.stepNow(agent.TriggerResume)
}

// retry runs the failed run again.
func (c *convo) retry() (*recorder, error) {
	c.t.Helper()
	c.history = append(c.history, agent.Event{Kind: agent.EventRunState, State: agent.StateRunning})
	return c.stepNow(agent.TriggerRetry)
}

func (c *convo) stepNow(trigger agent.Trigger) (*recorder, error) {
	c.t.Helper()
	c.step++
	rec, err := c.deliver(trigger)
	c.history = append(c.history, rec.events...)
	switch {
	case err != nil && c.ctx.Err() != nil:
		c.history = append(c.history, agent.Event{Kind: agent.EventRunState, State: agent.StateInterrupted})
	case err != nil:
		for _, q := range c.pending() {
			c.resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Superseded, Reason: "The agent failed."})
		}
		c.history = append(c.history, agent.Event{Kind: agent.EventRunState, State: agent.StateFailed, Error: err.Error()})
	case len(c.pending()) > 0:
		c.history = append(c.history, agent.Event{Kind: agent.EventRunState, State: agent.StateWaiting})
	default:
		c.history = append(c.history, agent.Event{Kind: agent.EventRunState, State: agent.StateDone})
	}
	return rec, err
}

// deliver runs the current step on the current history without storing what it reports.
func (c *convo) deliver(trigger agent.Trigger) (*recorder, error) {
	c.t.Helper()
	rec := &recorder{t: c.t, nextID: &c.ids, author: c.a.Info().Title, onText: c.onText}
	in := agent.StepInput{ConversationID: 1, RunID: c.run, StepID: c.step, Trigger: trigger,
		History: append([]agent.Event(nil), c.history...)}
	err := c.a.Step(c.ctx, in, rec)
	if err == nil {
		if err := rec.EndMessage(); err != nil {
			c.t.Fatal(err)
		}
	} else {
		rec.interrupt()
	}
	return rec, err
}

// pending returns the questions not resolved yet.
func (c *convo) pending() []agent.Question {
	resolved := map[int64]bool{}
	for _, ev := range c.history {
		if ev.Kind == agent.EventQuestionResolved {
			resolved[ev.Resolution.QuestionID] = true
		}
	}
	var out []agent.Question
	for _, ev := range c.history {
		if ev.Kind == agent.EventQuestionAsked && !resolved[ev.Question.ID] {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// answer validates a form against the pending question and resolves it.
func (c *convo) answer(q agent.Question, form url.Values) {
	c.t.Helper()
	values, errs := agent.Validate(q, form)
	if errs != nil {
		c.t.Fatalf("answer to %q: %v", q.Message, errs)
	}
	c.resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Answered, Values: values, By: "person"})
}

func (c *convo) resolve(res agent.Resolution) {
	// Values go through JSON in the store; so they do here.
	b, _ := json.Marshal(res)
	var stored agent.Resolution
	_ = json.Unmarshal(b, &stored)
	c.history = append(c.history, agent.Event{Kind: agent.EventQuestionResolved, Resolution: &stored})
}

// mustSend sends a message and fails the test when the step fails.
func (c *convo) mustSend(text string) *recorder {
	c.t.Helper()
	rec, err := c.send(text)
	if err != nil {
		c.t.Fatalf("step: %v", err)
	}
	return rec
}

// mustResume resumes and fails the test when the step fails.
func (c *convo) mustResume() *recorder {
	c.t.Helper()
	rec, err := c.resume()
	if err != nil {
		c.t.Fatalf("step: %v", err)
	}
	return rec
}

// onlyQuestion returns the one question a step asked.
func onlyQuestion(t *testing.T, rec *recorder) agent.Question {
	t.Helper()
	qs := rec.questions()
	if len(qs) != 1 {
		t.Fatalf("got %d questions, want 1 (messages %q)", len(qs), rec.messages())
	}
	return qs[0]
}

// form builds url.Values from name/value pairs.
func form(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v
}
