// Package backendtest drives agent back ends in tests the way the runner and the store do: the
// runner's own Output over a recording sink, and a conversation that runs steps on a growing
// history (messages, answers, retries).
package backendtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// Recorder is the Output a step gets in tests: the runner's own StepOutput, over a Sink
// that keeps in memory what the runner would store. A test sees exactly what the runner does
// with what an agent reports: a message opening with a UserInputMetaData form is held back and
// becomes a question when it ends (the text around the form stays), secret fields are
// refused, a message cut off is kept as interrupted.
type Recorder struct {
	*domain.StepOutput
	t      *testing.T
	nextID *int64
	sofar  strings.Builder
	asking bool
	// mu guards Events and Live against a live question's Await, which a back end may call
	// beside its other output (its other calls it makes one at a time).
	mu sync.Mutex

	// Deltas are the agent's Text calls, Live the pieces the runner would show live (a form
	// held back is not), Events what the step stored.
	Deltas []string
	Live   []string
	Events []domain.Event
	// OnText, when set, runs after every Text call with the message's text so far (to cut a
	// step mid-stream).
	OnText func(sofar string)
	// Asked counts the agent's own calls to Ask; FromText are the questions its messages
	// asked as UserInputMetaData forms.
	Asked    int
	FromText []domain.Question
	// LiveAnswer answers the live questions of the step (see Await).
	LiveAnswer func(domain.Question) domain.Resolution
}

// NewRecorder returns the Output of step in, speaking as author; questions are numbered
// from *nextID on.
func NewRecorder(t *testing.T, in domain.StepInput, author string, nextID *int64) *Recorder {
	r := &Recorder{t: t, nextID: nextID}
	r.StepOutput = domain.NewStepOutput(in, author, memorySink{r})
	return r
}

// Text implements domain.Output.
func (r *Recorder) Text(delta string) error {
	if delta != "" {
		r.Deltas = append(r.Deltas, delta)
	}
	err := r.StepOutput.Text(delta)
	r.sofar.WriteString(delta)
	if r.OnText != nil {
		r.OnText(r.sofar.String())
	}
	return err
}

// EndMessage implements domain.Output.
func (r *Recorder) EndMessage() error {
	r.sofar.Reset()
	return r.StepOutput.EndMessage()
}

// Ask implements domain.Output.
func (r *Recorder) Ask(q domain.Question) (int64, error) {
	r.Asked++
	r.asking = true
	defer func() { r.asking = false }()
	r.sofar.Reset()
	return r.StepOutput.Ask(q)
}

// interrupt keeps a message cut off, as the runner does when a step ends without ending it.
func (r *Recorder) interrupt() {
	if p, ok := r.Partial(); ok {
		r.Events = append(r.Events, p)
	}
}

// memorySink stores what a step reports in its Recorder.
type memorySink struct{ r *Recorder }

func (s memorySink) Live(msgID, author, delta string) {
	s.r.mu.Lock()
	s.r.Live = append(s.r.Live, delta)
	s.r.mu.Unlock()
}

func (s memorySink) Store(ev domain.Event) error {
	s.r.mu.Lock()
	s.r.Events = append(s.r.Events, ev)
	s.r.mu.Unlock()
	return nil
}

func (s memorySink) Ask(q domain.Question) (int64, error) {
	if !s.r.asking {
		s.r.FromText = append(s.r.FromText, q)
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	*s.r.nextID++
	q.ID = *s.r.nextID
	s.r.Events = append(s.r.Events, domain.Event{Kind: domain.EventQuestionAsked, Question: &q, Author: q.Asker})
	return q.ID, nil
}

// Await answers a live question with the Convo's LiveAnswer, as if the person answered it
// while the step waited; without one the question expires, as at a restart.
func (s memorySink) Await(ctx context.Context, id int64) (domain.Resolution, error) {
	var q domain.Question
	s.r.mu.Lock()
	for _, ev := range s.r.Events {
		if ev.Kind == domain.EventQuestionAsked && ev.Question.ID == id {
			q = *ev.Question
		}
	}
	s.r.mu.Unlock()
	if s.r.LiveAnswer == nil {
		return domain.Resolution{}, errors.New("the test gives no live answers")
	}
	res := s.r.LiveAnswer(q)
	res.QuestionID = id
	s.r.mu.Lock()
	s.r.Events = append(s.r.Events, domain.Event{Kind: domain.EventQuestionResolved, Resolution: &res})
	s.r.mu.Unlock()
	return res, nil
}

// Messages returns the finished agent messages of the step.
func (r *Recorder) Messages() []string {
	var out []string
	for _, ev := range r.Events {
		if ev.Kind == domain.EventAgentMessage {
			out = append(out, ev.Text)
		}
	}
	return out
}

// Questions returns the questions the step asked.
func (r *Recorder) Questions() []domain.Question {
	var out []domain.Question
	for _, ev := range r.Events {
		if ev.Kind == domain.EventQuestionAsked {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// Plans returns the plans the step published.
func (r *Recorder) Plans() []domain.Plan {
	var out []domain.Plan
	for _, ev := range r.Events {
		if ev.Kind == domain.EventPlan {
			out = append(out, *ev.Plan)
		}
	}
	return out
}

// LastCheckpoint decodes the newest checkpoint of the step.
func (r *Recorder) LastCheckpoint() map[string]any {
	var cp map[string]any
	for _, ev := range r.Events {
		if ev.Kind == domain.EventCheckpoint {
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
	Agent   domain.Agent
	ids     int64
	History []domain.Event
	Run     int64
	Step    int64
	Ctx     context.Context
	// OnText is handed to each step's Recorder.
	OnText func(string)
	// LiveAnswer answers live questions while the step waits (see Recorder.Await).
	LiveAnswer func(domain.Question) domain.Resolution
	// RejectFormText fails the test when a message asks through a UserInputMetaData form
	// written as text: for back ends that must ask such forms themselves.
	RejectFormText bool
	// Language is handed to each step, as intake would have detected it.
	Language string
	// ID is the conversation's id (1 unless set): conversations at once need their own.
	ID int64
	// Person is the account whose conversation it is (StepInput.Person).
	Person string
	docs   map[int64]domain.Document
}

// NewConvo starts an empty conversation with agent a.
func NewConvo(t *testing.T, a domain.Agent) *Convo {
	t.Helper()
	return &Convo{t: t, Agent: a, Ctx: context.Background()}
}

// Send records the person's message and runs a step on it.
func (c *Convo) Send(text string) (*Recorder, error) {
	c.t.Helper()
	for _, q := range c.Pending() {
		c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Superseded, Reason: "The person sent a new message instead of answering."})
	}
	c.Run++
	c.History = append(c.History,
		domain.Event{Kind: domain.EventUserMessage, RunID: c.Run, Text: text, Author: "person"},
		domain.Event{Kind: domain.EventRunState, RunID: c.Run, State: domain.StateRunning})
	return c.StepNow(domain.TriggerMessage)
}

// Regenerate branches the conversation as the store does to regenerate the last reply: the
// new version keeps the log up to the person's last message and its run's start (and
// intake), then records the version and runs a step on that message again.
func (c *Convo) Regenerate() (*Recorder, error) {
	c.t.Helper()
	last := -1
	for i, ev := range c.History {
		if ev.Kind == domain.EventUserMessage {
			last = i
		}
	}
	if last < 0 {
		c.t.Fatal("nothing to regenerate")
	}
	keep := last + 1
	for keep < len(c.History) && (c.History[keep].Kind == domain.EventIntake || c.History[keep].Kind == domain.EventRunState && c.History[keep].State == domain.StateRunning) {
		keep++
	}
	c.Run++
	c.History = append(c.History[:keep:keep],
		domain.Event{Kind: domain.EventVersion, Shown: int64(c.Run), Reason: domain.VersionRegenerate},
		domain.Event{Kind: domain.EventRunState, State: domain.StateRunning})
	return c.StepNow(domain.TriggerMessage)
}

// SendWithDocuments records the person's message as intake leaves it (its intent, and
// documents split off or attached) and runs a step on it. Each document gets an id, which
// the returned refs carry.
func (c *Convo) SendWithDocuments(raw, intent string, docs ...domain.Document) (*Recorder, []domain.DocumentRef, error) {
	c.t.Helper()
	var refs []domain.DocumentRef
	for _, d := range docs {
		if d.Label == "" {
			d.Label = domain.LabelUserContext
		}
		refs = append(refs, c.AddDocument(d))
	}
	for _, q := range c.Pending() {
		c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Superseded, Reason: "The person sent a new message instead of answering."})
	}
	c.Run++
	c.History = append(c.History,
		domain.Event{Kind: domain.EventUserMessage, RunID: c.Run, Text: raw, Intent: intent, Documents: refs, Author: "person"},
		domain.Event{Kind: domain.EventRunState, RunID: c.Run, State: domain.StateRunning})
	rec, err := c.StepNow(domain.TriggerMessage)
	return rec, refs, err
}

// AddDocument stores a document of the conversation (a file given as an answer, say) under
// a new id, and returns its ref.
func (c *Convo) AddDocument(d domain.Document) domain.DocumentRef {
	if c.docs == nil {
		c.docs = map[int64]domain.Document{}
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
func (c *Convo) Document(_ context.Context, id int64) (domain.Document, error) {
	d, ok := c.docs[id]
	if !ok {
		return d, domain.Errorf(domain.ENOTFOUND, "No document %d in this conversation.", id)
	}
	return d, nil
}

// Resume runs the step that follows the answers.
func (c *Convo) Resume() (*Recorder, error) {
	c.t.Helper()
	if p := c.Pending(); len(p) > 0 {
		c.t.Fatalf("resume with %d questions pending", len(p))
	}
	c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateRunning})
	return c.StepNow(domain.TriggerResume)
}

// Retry runs the failed run again.
func (c *Convo) Retry() (*Recorder, error) {
	c.t.Helper()
	c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateRunning})
	return c.StepNow(domain.TriggerRetry)
}

// StepNow runs the next step and stores its outcome as the runner would.
func (c *Convo) StepNow(trigger domain.Trigger) (*Recorder, error) {
	c.t.Helper()
	c.Step++
	rec, err := c.Deliver(trigger)
	c.History = append(c.History, rec.Events...)
	switch {
	case err != nil && c.Ctx.Err() != nil:
		c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateInterrupted})
	case err != nil:
		for _, q := range c.Pending() {
			c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Superseded, Reason: "The agent failed."})
		}
		c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateFailed, Error: err.Error()})
	case len(c.Pending()) > 0:
		c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateWaiting})
	default:
		c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateDone})
	}
	return rec, err
}

// Deliver runs the current step on the current history without storing what it reports.
func (c *Convo) Deliver(trigger domain.Trigger) (*Recorder, error) {
	c.t.Helper()
	id := c.ID
	if id == 0 {
		id = 1
	}
	in := domain.StepInput{ConversationID: id, Person: c.Person, RunID: c.Run, StepID: c.Step, Trigger: trigger,
		History: append([]domain.Event(nil), c.History...), Language: c.Language, Documents: c}
	rec := NewRecorder(c.t, in, c.Agent.Info().Title, &c.ids)
	rec.Follow(c.Agent.Info())
	rec.OnText = c.OnText
	rec.LiveAnswer = c.LiveAnswer
	err := c.Agent.Step(c.Ctx, in, rec)
	if err == nil {
		if err := rec.EndMessage(); err != nil {
			c.t.Fatal(err)
		}
	} else {
		rec.interrupt()
	}
	if c.RejectFormText {
		for _, q := range rec.FromText {
			c.t.Errorf("a UserInputMetaData form reached the runner as text: %q", q.Message)
		}
	}
	return rec, err
}

// Pending returns the questions not resolved yet.
func (c *Convo) Pending() []domain.Question {
	resolved := map[int64]bool{}
	for _, ev := range c.History {
		if ev.Kind == domain.EventQuestionResolved {
			resolved[ev.Resolution.QuestionID] = true
		}
	}
	var out []domain.Question
	for _, ev := range c.History {
		if ev.Kind == domain.EventQuestionAsked && !resolved[ev.Question.ID] {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// Answer validates a form against the pending question and resolves it.
func (c *Convo) Answer(q domain.Question, form url.Values) {
	c.t.Helper()
	values, errs := domain.Validate(q, form)
	if errs != nil {
		c.t.Fatalf("answer to %q: %v", q.Message, errs)
	}
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Answered, Values: values, By: "person"})
}

// Resolve stores a resolution, its values through JSON as the store keeps them.
func (c *Convo) Resolve(res domain.Resolution) {
	// Values go through JSON in the store; so they do here.
	b, _ := json.Marshal(res)
	var stored domain.Resolution
	_ = json.Unmarshal(b, &stored)
	c.History = append(c.History, domain.Event{Kind: domain.EventQuestionResolved, Resolution: &stored})
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
func OnlyQuestion(t *testing.T, rec *Recorder) domain.Question {
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

// Root is the repository's folder: the first above the working directory with a go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}
