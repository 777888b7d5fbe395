package builtin

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-chat/parley/agent"
)

// recorder is an agent.Output that keeps what a step reported as the events the runner
// would store, turning a finished UserInputMetaData message into a question as it does.
type recorder struct {
	t      *testing.T
	author string
	text   strings.Builder
	open   bool
	nextID *int64
	events []agent.Event
	deltas []string
	forms  []string // UserInputMetaData messages, which became questions
	asked  int      // calls to Ask by the agent itself
	// onText, when set, runs after every Text call (to cancel a context mid-stream).
	onText func()
}

func (r *recorder) Text(delta string) error {
	r.open = true
	r.text.WriteString(delta)
	r.deltas = append(r.deltas, delta)
	if r.onText != nil {
		r.onText()
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
	if strings.HasPrefix(strings.TrimSpace(text), agent.UserInputMetaDataPrefix) {
		if q, ok := agent.ParseUserInputMetaData(text); ok {
			r.forms = append(r.forms, text)
			return r.store(q)
		}
	}
	r.events = append(r.events, agent.Event{Kind: agent.EventAgentMessage, Text: text, Author: r.author})
	return nil
}

func (r *recorder) As(author string) {
	if author != r.author {
		_ = r.EndMessage()
		r.author = author
	}
}

func (r *recorder) Plan(p agent.Plan) error {
	p.Steps = append([]agent.PlanStep(nil), p.Steps...)
	r.events = append(r.events, agent.Event{Kind: agent.EventPlan, Plan: &p, Author: r.author})
	return nil
}

func (r *recorder) Ask(q agent.Question) (int64, error) {
	r.asked++
	if err := r.EndMessage(); err != nil {
		return 0, err
	}
	if err := r.store(q); err != nil {
		return 0, err
	}
	return *r.nextID, nil
}

// store checks and records a question the way the runner's Ask does.
func (r *recorder) store(q agent.Question) error {
	r.t.Helper()
	if q.Asker == "" {
		q.Asker = r.author
	}
	q = agent.RefuseSecrets(q)
	if len(q.Refused) > 0 {
		r.t.Errorf("question %q has refused fields: %+v", q.Message, q.Refused)
	}
	if err := q.Check(); err != nil {
		r.t.Fatalf("invalid question %q: %v", q.Message, err)
	}
	*r.nextID++
	q.ID = *r.nextID
	r.events = append(r.events, agent.Event{Kind: agent.EventQuestionAsked, Question: &q, Author: q.Asker})
	return nil
}

func (r *recorder) Checkpoint(state any) error {
	b, err := json.Marshal(state)
	if err != nil {
		return err
	}
	r.events = append(r.events, agent.Event{Kind: agent.EventCheckpoint, Checkpoint: b})
	return nil
}

// questions returns the questions the step asked, however it asked them.
func (r *recorder) questions() []agent.Question {
	var out []agent.Question
	for _, ev := range r.events {
		if ev.Kind == agent.EventQuestionAsked {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// messages returns the finished agent messages of the step.
func (r *recorder) messages() []agent.Event {
	var out []agent.Event
	for _, ev := range r.events {
		if ev.Kind == agent.EventAgentMessage {
			out = append(out, ev)
		}
	}
	return out
}

// transcript joins the step's messages, for Contains checks.
func (r *recorder) transcript() string {
	var parts []string
	for _, m := range r.messages() {
		parts = append(parts, m.Author+": "+m.Text)
	}
	return strings.Join(parts, "\n\n")
}

// convo drives an agent through a conversation the way the runner does: a message starts a
// run, a step that asked waits until its questions are resolved, then the run resumes.
type convo struct {
	t       *testing.T
	a       agent.Agent
	history []agent.Event
	run     int64
	step    int64
	ids     int64
	last    *recorder
}

func newConvo(t *testing.T, a agent.Agent) *convo {
	t.Helper()
	return &convo{t: t, a: a}
}

// send starts a new run with a message; questions still pending are superseded.
func (c *convo) send(text string) *recorder {
	c.t.Helper()
	for _, q := range c.pending() {
		c.resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Superseded})
	}
	c.run++
	c.history = append(c.history, agent.Event{Kind: agent.EventUserMessage, Text: text, Author: "person"})
	return c.stepNow(agent.TriggerMessage)
}

// resume runs the next step of the current run.
func (c *convo) resume() *recorder {
	c.t.Helper()
	if p := c.pending(); len(p) > 0 {
		c.t.Fatalf("resume with %d questions pending", len(p))
	}
	return c.stepNow(agent.TriggerResume)
}

func (c *convo) stepNow(trigger agent.Trigger) *recorder {
	c.t.Helper()
	c.step++
	rec := c.deliver(context.Background(), trigger)
	c.history = append(c.history, rec.events...)
	c.last = rec
	return rec
}

// deliver runs the current step on the current history without storing what it reports.
func (c *convo) deliver(ctx context.Context, trigger agent.Trigger) *recorder {
	c.t.Helper()
	rec := &recorder{t: c.t, nextID: &c.ids, author: c.a.Info().Title}
	in := agent.StepInput{ConversationID: 1, RunID: c.run, StepID: c.step, Trigger: trigger,
		History: append([]agent.Event(nil), c.history...)}
	if err := c.a.Step(ctx, in, rec); err != nil {
		c.t.Fatalf("step %d: %v", c.step, err)
	}
	if err := rec.EndMessage(); err != nil {
		c.t.Fatal(err)
	}
	return rec
}

// pending returns the questions not resolved yet.
func (c *convo) pending() []agent.Question {
	var out []agent.Question
	for _, ev := range c.history {
		if ev.Kind == agent.EventQuestionAsked {
			if _, ok := resolutionOf(c.history, ev.Question.ID); !ok {
				out = append(out, *ev.Question)
			}
		}
	}
	return out
}

// only returns the one question pending, failing otherwise.
func (c *convo) only() agent.Question {
	c.t.Helper()
	p := c.pending()
	if len(p) != 1 {
		c.t.Fatalf("want 1 pending question, got %d; transcript:\n%s", len(p), c.last.transcript())
	}
	return p[0]
}

// answer validates a form against the pending question, as the web page submits it.
func (c *convo) answer(form url.Values) {
	c.t.Helper()
	q := c.only()
	values, errs := agent.Validate(q, form)
	if errs != nil {
		c.t.Fatalf("answer to %q: %v", q.Message, errs)
	}
	c.resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Answered, Values: values, By: "person"})
}

// decline declines the pending question.
func (c *convo) decline() {
	c.t.Helper()
	c.resolve(agent.Resolution{QuestionID: c.only().ID, Outcome: agent.Declined, By: "person"})
}

func (c *convo) resolve(res agent.Resolution) {
	c.history = append(c.history, agent.Event{Kind: agent.EventQuestionResolved, Resolution: &res})
}

// fieldNames lists the names of a question's fields.
func fieldNames(q agent.Question) []string {
	var out []string
	for _, f := range q.Fields {
		out = append(out, f.Name)
	}
	return out
}

// form builds url.Values from name/value pairs.
func form(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v
}
