// Package agenttest drives agent back ends in tests the way the runner and the store do:
// a recording agent.Output that stores what a step reports as the runner would, and a
// conversation that runs steps on a growing history (messages, answers, retries).
package agenttest

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-chat/parley/agent"
)

// Recorder is an agent.Output that keeps what a step reported as the events the runner
// would store: a finished message starting with UserInputMetaData: becomes a question, a
// question gets the next id, secret fields are refused.
type Recorder struct {
	t      *testing.T
	author string
	nextID *int64

	text strings.Builder
	open bool
	// Deltas are the Text calls; Events what the step stored, as the runner would.
	Deltas []string
	Events []agent.Event
	// OnText, when set, runs after every Text call (to cut a step mid-stream).
	OnText func(sofar string)
	// RejectFormText fails the test when a finished message is a UserInputMetaData form:
	// for back ends that must ask such forms themselves. Otherwise it is asked, as the
	// runner does.
	RejectFormText bool
}

// Text implements agent.Output.
func (r *Recorder) Text(delta string) error {
	if delta == "" {
		return nil
	}
	r.open = true
	r.text.WriteString(delta)
	r.Deltas = append(r.Deltas, delta)
	if r.OnText != nil {
		r.OnText(r.text.String())
	}
	return nil
}

// EndMessage implements agent.Output.
func (r *Recorder) EndMessage() error {
	if !r.open {
		return nil
	}
	text := r.text.String()
	r.text.Reset()
	r.open = false
	if q, _, _, ok := agent.SplitUserInputMetaData(text); ok {
		if r.RejectFormText {
			r.t.Errorf("a UserInputMetaData form reached the runner as text: %q", q.Message)
		} else {
			_, err := r.Ask(q)
			return err
		}
	}
	r.Events = append(r.Events, agent.Event{Kind: agent.EventAgentMessage, Text: text, Author: r.author})
	return nil
}

// interrupt closes a message left open, as the store does when a step ends without ending it.
func (r *Recorder) interrupt() {
	if r.open {
		r.Events = append(r.Events, agent.Event{Kind: agent.EventAgentMessage, Text: r.text.String(), Author: r.author, Interrupted: true})
		r.open = false
		r.text.Reset()
	}
}

// As implements agent.Output.
func (r *Recorder) As(author string) { r.author = author }

// Plan implements agent.Output.
func (r *Recorder) Plan(p agent.Plan) error {
	r.Events = append(r.Events, agent.Event{Kind: agent.EventPlan, Plan: &p})
	return nil
}

// Ask implements agent.Output.
func (r *Recorder) Ask(q agent.Question) (int64, error) {
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
	r.Events = append(r.Events, agent.Event{Kind: agent.EventQuestionAsked, Question: &q})
	return q.ID, nil
}

// Checkpoint implements agent.Output.
func (r *Recorder) Checkpoint(state any) error {
	b, err := json.Marshal(state)
	if err != nil {
		return err
	}
	r.Events = append(r.Events, agent.Event{Kind: agent.EventCheckpoint, Checkpoint: b})
	return nil
}

// Messages returns the finished agent messages of the step.
func (r *Recorder) Messages() []string {
	var out []string
	for _, ev := range r.Events {
		if ev.Kind == agent.EventAgentMessage {
			out = append(out, ev.Text)
		}
	}
	return out
}

// Questions returns the questions the step asked.
func (r *Recorder) Questions() []agent.Question {
	var out []agent.Question
	for _, ev := range r.Events {
		if ev.Kind == agent.EventQuestionAsked {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// Plans returns the plans the step published.
func (r *Recorder) Plans() []agent.Plan {
	var out []agent.Plan
	for _, ev := range r.Events {
		if ev.Kind == agent.EventPlan {
			out = append(out, *ev.Plan)
		}
	}
	return out
}

// LastCheckpoint decodes the newest checkpoint of the step.
func (r *Recorder) LastCheckpoint() map[string]any {
	var cp map[string]any
	for _, ev := range r.Events {
		if ev.Kind == agent.EventCheckpoint {
			cp = nil
			_ = json.Unmarshal(ev.Checkpoint, &cp)
		}
	}
	return cp
}

// Convo drives an agent the way the runner and the store do: a message starts a run, a step
// that asked waits for its answers, a failed step supersedes its questions and can be retried.
type Convo struct {
	t *testing.T
	// Agent is the back end under test; a test may swap it (a restart).
	Agent   agent.Agent
	ids     int64
	History []agent.Event
	Run     int64
	Step    int64
	Ctx     context.Context
	// OnText and RejectFormText are handed to each step's Recorder.
	OnText         func(string)
	RejectFormText bool
	// Language is handed to each step, as intake would have detected it.
	Language string
	docs     map[int64]agent.Document
}

// NewConvo starts an empty conversation with agent a.
func NewConvo(t *testing.T, a agent.Agent) *Convo {
	t.Helper()
	return &Convo{t: t, Agent: a, Ctx: context.Background()}
}

// Send records the person's message and runs a step on it.
func (c *Convo) Send(text string) (*Recorder, error) {
	c.t.Helper()
	for _, q := range c.Pending() {
		c.Resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Superseded, Reason: "The person sent a new message instead of answering."})
	}
	c.Run++
	c.History = append(c.History,
		agent.Event{Kind: agent.EventUserMessage, Text: text, Author: "person"},
		agent.Event{Kind: agent.EventRunState, State: agent.StateRunning})
	return c.StepNow(agent.TriggerMessage)
}

// SendWithDocuments records the person's message as intake leaves it (its intent, and
// documents split off or attached) and runs a step on it. Each document gets an id, which
// the returned refs carry.
func (c *Convo) SendWithDocuments(raw, intent string, docs ...agent.Document) (*Recorder, []agent.DocumentRef, error) {
	c.t.Helper()
	var refs []agent.DocumentRef
	for _, d := range docs {
		if d.Label == "" {
			d.Label = agent.LabelUserContext
		}
		refs = append(refs, c.AddDocument(d))
	}
	for _, q := range c.Pending() {
		c.Resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Superseded, Reason: "The person sent a new message instead of answering."})
	}
	c.Run++
	c.History = append(c.History,
		agent.Event{Kind: agent.EventUserMessage, Text: raw, Intent: intent, Documents: refs, Author: "person"},
		agent.Event{Kind: agent.EventRunState, State: agent.StateRunning})
	rec, err := c.StepNow(agent.TriggerMessage)
	return rec, refs, err
}

// AddDocument stores a document of the conversation (a file given as an answer, say) under
// a new id, and returns its ref.
func (c *Convo) AddDocument(d agent.Document) agent.DocumentRef {
	if c.docs == nil {
		c.docs = map[int64]agent.Document{}
	}
	c.ids++
	d.ID = c.ids
	if d.Size == 0 {
		d.Size = int64(len(d.Content))
	}
	c.docs[d.ID] = d
	return d.DocumentRef
}

// Document reads a document given with SendWithDocuments or AddDocument.
func (c *Convo) Document(_ context.Context, id int64) (agent.Document, error) {
	d, ok := c.docs[id]
	if !ok {
		return d, agent.Errorf(agent.ENOTFOUND, "No document %d in this conversation.", id)
	}
	return d, nil
}

// Resume runs the step that follows the answers.
func (c *Convo) Resume() (*Recorder, error) {
	c.t.Helper()
	if p := c.Pending(); len(p) > 0 {
		c.t.Fatalf("resume with %d questions pending", len(p))
	}
	c.History = append(c.History, agent.Event{Kind: agent.EventRunState, State: agent.StateRunning})
	return c.StepNow(agent.TriggerResume)
}

// Retry runs the failed run again.
func (c *Convo) Retry() (*Recorder, error) {
	c.t.Helper()
	c.History = append(c.History, agent.Event{Kind: agent.EventRunState, State: agent.StateRunning})
	return c.StepNow(agent.TriggerRetry)
}

// StepNow runs the next step and stores its outcome as the runner would.
func (c *Convo) StepNow(trigger agent.Trigger) (*Recorder, error) {
	c.t.Helper()
	c.Step++
	rec, err := c.Deliver(trigger)
	c.History = append(c.History, rec.Events...)
	switch {
	case err != nil && c.Ctx.Err() != nil:
		c.History = append(c.History, agent.Event{Kind: agent.EventRunState, State: agent.StateInterrupted})
	case err != nil:
		for _, q := range c.Pending() {
			c.Resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Superseded, Reason: "The agent failed."})
		}
		c.History = append(c.History, agent.Event{Kind: agent.EventRunState, State: agent.StateFailed, Error: err.Error()})
	case len(c.Pending()) > 0:
		c.History = append(c.History, agent.Event{Kind: agent.EventRunState, State: agent.StateWaiting})
	default:
		c.History = append(c.History, agent.Event{Kind: agent.EventRunState, State: agent.StateDone})
	}
	return rec, err
}

// Deliver runs the current step on the current history without storing what it reports.
func (c *Convo) Deliver(trigger agent.Trigger) (*Recorder, error) {
	c.t.Helper()
	rec := &Recorder{t: c.t, nextID: &c.ids, author: c.Agent.Info().Title, OnText: c.OnText, RejectFormText: c.RejectFormText}
	in := agent.StepInput{ConversationID: 1, RunID: c.Run, StepID: c.Step, Trigger: trigger,
		History: append([]agent.Event(nil), c.History...), Language: c.Language, Documents: c}
	err := c.Agent.Step(c.Ctx, in, rec)
	if err == nil {
		if err := rec.EndMessage(); err != nil {
			c.t.Fatal(err)
		}
	} else {
		rec.interrupt()
	}
	return rec, err
}

// Pending returns the questions not resolved yet.
func (c *Convo) Pending() []agent.Question {
	resolved := map[int64]bool{}
	for _, ev := range c.History {
		if ev.Kind == agent.EventQuestionResolved {
			resolved[ev.Resolution.QuestionID] = true
		}
	}
	var out []agent.Question
	for _, ev := range c.History {
		if ev.Kind == agent.EventQuestionAsked && !resolved[ev.Question.ID] {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// Answer validates a form against the pending question and resolves it.
func (c *Convo) Answer(q agent.Question, form url.Values) {
	c.t.Helper()
	values, errs := agent.Validate(q, form)
	if errs != nil {
		c.t.Fatalf("answer to %q: %v", q.Message, errs)
	}
	c.Resolve(agent.Resolution{QuestionID: q.ID, Outcome: agent.Answered, Values: values, By: "person"})
}

// Resolve stores a resolution, its values through JSON as the store keeps them.
func (c *Convo) Resolve(res agent.Resolution) {
	// Values go through JSON in the store; so they do here.
	b, _ := json.Marshal(res)
	var stored agent.Resolution
	_ = json.Unmarshal(b, &stored)
	c.History = append(c.History, agent.Event{Kind: agent.EventQuestionResolved, Resolution: &stored})
}

// MustSend sends a message and fails the test when the step fails.
func (c *Convo) MustSend(text string) *Recorder {
	c.t.Helper()
	rec, err := c.Send(text)
	if err != nil {
		c.t.Fatalf("step: %v", err)
	}
	return rec
}

// MustResume resumes and fails the test when the step fails.
func (c *Convo) MustResume() *Recorder {
	c.t.Helper()
	rec, err := c.Resume()
	if err != nil {
		c.t.Fatalf("step: %v", err)
	}
	return rec
}

// OnlyQuestion returns the one question a step asked.
func OnlyQuestion(t *testing.T, rec *Recorder) agent.Question {
	t.Helper()
	qs := rec.Questions()
	if len(qs) != 1 {
		t.Fatalf("got %d questions, want 1 (messages %q)", len(qs), rec.Messages())
	}
	return qs[0]
}

// Form builds url.Values from name/value pairs.
func Form(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v
}
