package a2a

import (
	"context"
	"errors"
	"iter"
	"strings"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// pendingFinal is a final_result artifact still arriving.
type pendingFinal struct {
	id    sdk.ArtifactID
	text  strings.Builder
	forms []domain.Question
}

// maxPlanSteps bounds the progress shown as a plan: the newest steps are kept.
const maxPlanSteps = 12

// session is one step's view of the remote task: it turns the events of one or more calls
// into what the person sees, and keeps the checkpoint up to date.
type session struct {
	a   *Agent
	c   *conn
	in  domain.StepInput
	out domain.Output
	w   *writer

	cp, saved checkpoint
	// onAccept runs once, when the first event shows that the agent accepted the message.
	onAccept func()
	accepted bool
	// replying is set while a message into a waiting task has had no event back yet.
	replying bool
	// asked is set once a question was asked in this step.
	asked bool
	// done is set when the round ended: a terminal state, the task waiting for the person,
	// or a reply as a plain message.
	done bool

	plan  []domain.PlanStep
	sizes map[sdk.ArtifactID]int
	// final gathers the chunks of a final_result artifact until its last chunk or the next
	// event: the result is shown whole, once.
	final *pendingFinal
	// names of the artifacts: only the first chunk of an artifact need carry its name.
	names map[sdk.ArtifactID]string
	// known artifacts of the task were shown in earlier rounds; seen ones in this step.
	known int
	seen  map[sdk.ArtifactID]bool
	sends int
}

func newSession(a *Agent, c *conn, in domain.StepInput, out domain.Output, cp checkpoint) *session {
	s := &session{a: a, c: c, in: in, out: out, cp: cp, saved: cp, known: cp.Artifacts,
		sizes: map[sdk.ArtifactID]int{}, names: map[sdk.ArtifactID]string{}, seen: map[sdk.ArtifactID]bool{}}
	s.w = newWriter(out, s.ask)
	return s
}

// save stores the checkpoint when it changed.
func (s *session) save() error {
	if s.cp == s.saved {
		return nil
	}
	if err := s.out.Checkpoint(s.cp); err != nil {
		return err
	}
	s.saved = s.cp
	return nil
}

// run consumes one streaming call until the round ends. Protocol failures come back as a
// *callError; a stream that ends while the task still works is a fault.
func (s *session) run(ctx context.Context, method string, call func(context.Context) iter.Seq2[sdk.Event, error]) error {
	cctx, w := withWatch(ctx)
	n := 0
	for ev, err := range call(cctx) {
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &callError{method: method, w: w, err: err, events: n}
		}
		n++
		if err := s.handle(ev); err != nil {
			return err
		}
		if s.done {
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if n == 0 {
		return &callError{method: method, w: w, err: errors.New("the stream ended without any event"), events: 0}
	}
	state := s.cp.State
	if state == "" {
		state = sdk.TaskStateUnknown
	}
	return s.a.faultf(nil, "the agent's stream ended before the task finished (last state %q); Retry follows the task again", state)
}

// handle shows one event and records what it says about the task.
func (s *session) handle(ev sdk.Event) error {
	first := s.replying
	s.replying = false
	switch e := ev.(type) {
	case *sdk.Task:
		// A v1.0 agent starts the stream of a reply with its task as it stood before the
		// reply was taken in: still waiting for the answer that is on its way.
		waited := first && e.ID == s.cp.TaskID && (e.Status.State == sdk.TaskStateInputRequired || e.Status.State == sdk.TaskStateAuthRequired)
		s.adopt(e.ID, e.ContextID)
		from := min(s.known, len(e.Artifacts))
		for _, art := range e.Artifacts[from:] {
			if art != nil && !s.seen[art.ID] {
				if err := s.artifact(art, false, true); err != nil {
					return err
				}
			}
		}
		if waited {
			return nil
		}
		if err := s.track(e.Status.State); err != nil {
			return err
		}
		return s.status(e.Status)
	case *sdk.TaskStatusUpdateEvent:
		s.adopt(e.TaskID, e.ContextID)
		if err := s.track(e.Status.State); err != nil {
			return err
		}
		return s.status(e.Status)
	case *sdk.TaskArtifactUpdateEvent:
		s.adopt(e.TaskID, e.ContextID)
		if err := s.track(""); err != nil {
			return err
		}
		if e.Artifact == nil {
			return nil
		}
		return s.artifact(e.Artifact, e.Append, e.LastChunk)
	case *sdk.Message:
		s.adopt(e.TaskID, e.ContextID)
		if err := s.track(""); err != nil {
			return err
		}
		s.done = true
		if err := s.flushFinal(); err != nil {
			return err
		}
		return s.result(render(e.Parts))
	}
	return nil
}

// adopt takes the task and context ids an event names.
func (s *session) adopt(taskID sdk.TaskID, contextID string) {
	if !s.accepted {
		s.accepted = true
		if s.onAccept != nil {
			s.onAccept()
		}
	}
	if taskID != "" && taskID != s.cp.TaskID {
		s.cp.TaskID, s.cp.State, s.cp.Artifacts = taskID, "", 0
		s.known, s.seen = 0, map[sdk.ArtifactID]bool{}
	}
	if contextID != "" {
		s.cp.ContextID = contextID
	}
}

// track records the task's state and stores the checkpoint when something changed. When the
// task pauses or ends, the artifacts shown so far are counted, so that a later catch-up does
// not show them again.
func (s *session) track(state sdk.TaskState) error {
	if state != "" && state != sdk.TaskStateUnknown {
		s.cp.State = state
		if state.Terminal() || state == sdk.TaskStateInputRequired || state == sdk.TaskStateAuthRequired {
			s.cp.Artifacts = s.known + len(s.seen)
		}
	}
	return s.save()
}

// status shows a status: progress while working, a question when input is required, a
// notice when sign-in is required, the result or the failure at the end.
func (s *session) status(st sdk.TaskStatus) error {
	if st.State != sdk.TaskStateSubmitted && st.State != sdk.TaskStateWorking {
		if err := s.flushFinal(); err != nil {
			return err
		}
	}
	switch st.State {
	case sdk.TaskStateSubmitted, sdk.TaskStateWorking:
		return s.progress(plainText(st.Message))
	case sdk.TaskStateInputRequired:
		s.done = true
		return s.inputRequired(st.Message)
	case sdk.TaskStateAuthRequired:
		s.done = true
		return s.authRequired(st.Message)
	case sdk.TaskStateCompleted:
		s.done = true
		if err := s.finishPlan(domain.StepDone); err != nil {
			return err
		}
		if st.Message == nil {
			return s.w.end()
		}
		r := render(st.Message.Parts)
		if s.w.shown(r.text) {
			r.text = ""
		}
		return s.result(r)
	case sdk.TaskStateCanceled:
		s.done = true
		if err := s.w.end(); err != nil {
			return err
		}
		text := plainText(st.Message)
		if text == "" {
			text = "The task was cancelled."
		}
		if err := s.w.text(text); err != nil {
			return err
		}
		return s.w.end()
	case sdk.TaskStateFailed, sdk.TaskStateRejected:
		s.done = true
		if err := s.finishPlan(domain.StepFailed); err != nil {
			return err
		}
		if err := s.w.end(); err != nil {
			return err
		}
		why := plainText(st.Message)
		if why == "" {
			why = "no reason given"
		}
		return s.a.faultf(nil, "the agent reported the task as %s: %s", st.State, domain.OneLine(why))
	}
	return nil
}

// artifact shows an artifact chunk: final_result ends the message, anything else streams.
// appended says the chunk continues the artifact; last that it is the artifact's last chunk.
func (s *session) artifact(art *sdk.Artifact, appended, last bool) error {
	s.seen[art.ID] = true
	if art.Name != "" {
		s.names[art.ID] = art.Name
	}
	name := s.names[art.ID]
	s.sizes[art.ID] += partsSize(art.Parts)
	if n := s.sizes[art.ID]; n > s.a.cfg.MaxArtifactBytes {
		return s.a.faultf(nil, "the agent sent an artifact (%q) of more than %s, the limit (max_artifact_bytes); what came before it is kept",
			name, size(s.a.cfg.MaxArtifactBytes))
	}
	r := render(art.Parts)
	if name == "final_result" {
		if s.final == nil || s.final.id != art.ID || !appended {
			if err := s.flushFinal(); err != nil {
				return err
			}
			s.final = &pendingFinal{id: art.ID}
		}
		s.final.text.WriteString(r.text)
		s.final.forms = append(s.final.forms, r.forms...)
		if last {
			return s.flushFinal()
		}
		return nil
	}
	if err := s.flushFinal(); err != nil {
		return err
	}
	if err := s.w.text(r.text); err != nil {
		return err
	}
	for _, q := range r.forms {
		if err := s.ask(q); err != nil {
			return err
		}
	}
	return nil
}

// flushFinal shows the final_result gathered so far.
func (s *session) flushFinal() error {
	f := s.final
	if f == nil {
		return nil
	}
	s.final = nil
	return s.result(rendered{text: f.text.String(), forms: f.forms})
}

// result ends the message with a complete result and asks the forms it carries.
func (s *session) result(r rendered) error {
	if err := s.w.final(r.text); err != nil {
		return err
	}
	for _, q := range r.forms {
		if s.asked {
			break
		}
		if err := s.ask(q); err != nil {
			return err
		}
	}
	return nil
}

// inputRequired asks the question of an input-required status: the form its message
// carries, or one answer in the person's words, with the status text saying why.
func (s *session) inputRequired(m *sdk.Message) error {
	if err := s.w.end(); err != nil {
		return err
	}
	if err := s.finishPlan(domain.StepDone); err != nil {
		return err
	}
	if s.asked {
		// The form came in the streamed text or the result already.
		return nil
	}
	var r rendered
	if m != nil {
		r = render(m.Parts)
	}
	text := strings.TrimSpace(r.text)
	var q domain.Question
	switch f, before, after, ok := domain.SplitUserInputMetaData(text); {
	case len(r.forms) > 0:
		q = r.forms[0]
		// The same form often comes twice, as data and as UserInputMetaData text: ask it once.
		if _, before, after, ok := domain.SplitUserInputMetaData(text); ok {
			text = strings.TrimSpace(before + "\n\n" + after)
		}
	case ok:
		q, text = f, strings.TrimSpace(before+"\n\n"+after)
	default:
		q = domain.Question{Message: text, Fields: []domain.Field{{Name: "answer", Label: "Your answer", Kind: domain.KindTextarea, Required: true}}}
		if q.Message == "" {
			q.Message = "The agent needs more information to go on."
		}
		text = ""
	}
	switch {
	case text == "" || text == q.Message:
	case q.Message == "":
		q.Message = text
	default:
		if err := s.w.text(text); err != nil {
			return err
		}
	}
	return s.ask(q)
}

// authRequired shows the agent's sign-in request with its link. Parley never asks for
// credentials: the person signs in at the agent's side and then writes again.
func (s *session) authRequired(m *sdk.Message) error {
	if err := s.w.end(); err != nil {
		return err
	}
	text := ""
	link := ""
	if m != nil {
		// Only text and structured content: data that is not meant to be read stays out, and
		// no form is ever asked here.
		var parts []sdk.Part
		for _, p := range m.Parts {
			if d, ok := p.(sdk.DataPart); ok {
				if _, _, ok := structured(d.Data); !ok {
					continue
				}
			}
			parts = append(parts, p)
		}
		text = strings.TrimSpace(render(parts).text)
		link = authLink(m)
	}
	if text == "" {
		text = "The agent needs you to sign in before it can go on."
	}
	if link != "" && !strings.Contains(text, link) {
		text += "\n\n[Sign in](" + link + ")"
	}
	text += "\n\nOnce you have signed in, send a message here to go on."
	if err := s.w.text(text); err != nil {
		return err
	}
	return s.w.end()
}

// authLink finds a sign-in address in a message's data parts or metadata.
func authLink(m *sdk.Message) string {
	maps := []map[string]any{m.Metadata}
	for _, p := range m.Parts {
		if d, ok := p.(sdk.DataPart); ok {
			maps = append(maps, d.Data)
		}
	}
	for _, mm := range maps {
		for _, k := range []string{"auth_url", "authorization_url", "authUrl", "login_url", "url", "link"} {
			if u, ok := mm[k].(string); ok && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
				return u
			}
		}
	}
	return ""
}

// ask asks a question under the task's key, storing the checkpoint first so that the
// resume finds the task.
func (s *session) ask(q domain.Question) error {
	if err := s.w.end(); err != nil {
		return err
	}
	q.Key = string(s.cp.TaskID)
	q.AllowCancel = true
	if err := s.save(); err != nil {
		return err
	}
	if _, err := s.out.Ask(q); err != nil {
		return err
	}
	s.asked = true
	return nil
}

// progress shows a status text as the current step of the agent's plan.
func (s *session) progress(text string) error {
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	text = domain.OneLine(text)
	if text == "" || (len(s.plan) > 0 && s.plan[len(s.plan)-1].Title == text) {
		return nil
	}
	for i := range s.plan {
		if s.plan[i].Status == domain.StepInProgress {
			s.plan[i].Status = domain.StepDone
		}
	}
	s.plan = append(s.plan, domain.PlanStep{Title: text, Status: domain.StepInProgress})
	if len(s.plan) > maxPlanSteps {
		s.plan = s.plan[len(s.plan)-maxPlanSteps:]
	}
	return s.out.Plan(domain.Plan{Title: "Progress", Steps: append([]domain.PlanStep(nil), s.plan...)})
}

// finishPlan marks the step in progress as finished with st.
func (s *session) finishPlan(st domain.StepStatus) error {
	n := len(s.plan)
	if n == 0 || s.plan[n-1].Status != domain.StepInProgress {
		return nil
	}
	s.plan[n-1].Status = st
	return s.out.Plan(domain.Plan{Title: "Progress", Steps: append([]domain.PlanStep(nil), s.plan...)})
}
