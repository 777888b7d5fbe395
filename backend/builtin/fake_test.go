package builtin

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/domain"
)

// recorder is backendtest's Recorder (the runner's own Output over a recording sink), with the
// helpers these tests read it by.
type recorder struct{ *backendtest.Recorder }

// newRecorder returns the Output of a first step.
func newRecorder(t *testing.T) *recorder {
	return &recorder{backendtest.NewRecorder(t, domain.StepInput{ConversationID: 1, RunID: 1, StepID: 1}, "", new(int64))}
}

// messages returns the finished agent messages of the step.
func (r *recorder) messages() []domain.Event {
	var out []domain.Event
	for _, ev := range r.Events {
		if ev.Kind == domain.EventAgentMessage {
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

// convo drives an agent through a conversation the way the runner does (backendtest's Convo):
// a message starts a run, a step that asked waits until its questions are resolved, then the
// run resumes. A built-in agent never asks for what Parley refuses to collect.
type convo struct {
	*backendtest.Convo
	t    *testing.T
	last *recorder
}

func newConvo(t *testing.T, a domain.Agent) *convo {
	t.Helper()
	return &convo{Convo: backendtest.NewConvo(t, a), t: t}
}

// checked fails the test for a question with refused fields, and keeps rec as the last step.
func (c *convo) checked(rec *backendtest.Recorder) *recorder {
	c.t.Helper()
	for _, q := range rec.Questions() {
		if len(q.Refused) > 0 {
			c.t.Errorf("question %q has refused fields: %+v", q.Message, q.Refused)
		}
	}
	c.last = &recorder{rec}
	return c.last
}

// send starts a new run with a message; questions still pending are superseded.
func (c *convo) send(text string) *recorder {
	c.t.Helper()
	return c.checked(c.MustSend(text))
}

// resume runs the next step of the current run.
func (c *convo) resume() *recorder {
	c.t.Helper()
	return c.checked(c.MustResume())
}

// stepNow runs a step on the history as it stands.
func (c *convo) stepNow(trigger domain.Trigger) *recorder {
	c.t.Helper()
	rec, err := c.StepNow(trigger)
	if err != nil {
		c.t.Fatalf("step %d: %v", c.Step, err)
	}
	return c.checked(rec)
}

// deliver runs the current step again on the current history without storing what it reports.
func (c *convo) deliver(ctx context.Context, trigger domain.Trigger) *recorder {
	c.t.Helper()
	c.Ctx = ctx
	defer func() { c.Ctx = context.Background() }()
	rec, err := c.Deliver(trigger)
	if err != nil {
		c.t.Fatalf("step %d: %v", c.Step, err)
	}
	return &recorder{rec}
}

// pending returns the questions not resolved yet.
func (c *convo) pending() []domain.Question { return c.Pending() }

// only returns the one question pending, failing otherwise.
func (c *convo) only() domain.Question {
	c.t.Helper()
	p := c.pending()
	if len(p) != 1 {
		transcript := ""
		if c.last != nil {
			transcript = c.last.transcript()
		}
		c.t.Fatalf("want 1 pending question, got %d; transcript:\n%s", len(p), transcript)
	}
	return p[0]
}

// answer validates a form against the pending question, as the web page submits it.
func (c *convo) answer(form url.Values) {
	c.t.Helper()
	c.Answer(c.only(), form)
}

// decline declines the pending question.
func (c *convo) decline() {
	c.t.Helper()
	c.Resolve(domain.Resolution{QuestionID: c.only().ID, Outcome: domain.Declined, By: "person"})
}

// fieldNames lists the names of a question's fields.
func fieldNames(q domain.Question) []string {
	var out []string
	for _, f := range q.Fields {
		out = append(out, f.Name)
	}
	return out
}

var form = backendtest.Form
