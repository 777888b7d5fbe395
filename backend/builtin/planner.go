package builtin

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-chat/parley/domain"
)

// EventPlanner is the built-in multi-agent event-planning workflow: a coordinator hands the
// request to venue, budget, catering and logistics specialists in turn, each of which asks
// the person only for what the conversation does not already say, and then writes the plan.
type EventPlanner struct {
	pace time.Duration
}

// NewEventPlanner returns the event-planning workflow agent.
func NewEventPlanner(opts Options) *EventPlanner {
	return &EventPlanner{pace: opts.Pace}
}

// Info describes the event planner in the agent picker.
func (p *EventPlanner) Info() domain.Info {
	return domain.Info{
		Name:  "event-planner",
		Title: "Event planner",
		Description: "Built-in demo workflow: a coordinator and four specialists (venue, budget, catering, " +
			"logistics) plan an event and ask you through forms when something is missing. Deterministic " +
			"and offline: its venues are illustrative and it books, orders or pays for nothing.",
		Builtin:  true,
		Kind:     "builtin",
		Icon:     "calendar",
		Starters: []string{"Plan a team offsite for 30 people in Lisbon", "Plan a birthday party for 12 people", "Organize a conference dinner for 80 guests"},
	}
}

// The workflow's phases, in order: the plan's steps and who speaks in each.
var phases = []struct{ step, author string }{
	{"Venue", "Venue specialist"},
	{"Budget", "Budget analyst"},
	{"Catering", "Catering coordinator"},
	{"Logistics", "Logistics manager"},
	{"Final plan", "Coordinator"},
}

const coordinator = "Coordinator"

// plannerState is the planner's checkpoint: everything a later step needs, since the agent
// itself keeps nothing between steps.
type plannerState struct {
	RunID int64 `json:"run_id"`
	// Seq numbers the questions of the conversation, to give each a unique key.
	Seq   int    `json:"seq"`
	Phase int    `json:"phase"`
	Done  bool   `json:"done,omitempty"`
	Facts facts  `json:"facts"`
	Venue *venue `json:"venue,omitempty"`
	// SplitOK says the budget split is settled; Split indexes splits.
	SplitOK bool `json:"split_ok,omitempty"`
	Split   int  `json:"split,omitempty"`
	// Tries counts unusable or missing answers per topic; Why is the reason to give
	// when asking again.
	Tries   map[string]int    `json:"tries,omitempty"`
	Why     map[string]string `json:"why,omitempty"`
	Started map[string]bool   `json:"started,omitempty"`
	// Notes are the defaults the planner assumed, by topic, repeated in the final plan.
	Notes   map[string]string `json:"notes,omitempty"`
	Pending []pending         `json:"pending,omitempty"`
	Plan    domain.Plan       `json:"plan"`
}

// pending is a question the planner is waiting on, found again on resume by its key.
type pending struct {
	Key   string `json:"key"`
	Topic string `json:"topic"`
}

// run is one step of the planner: the state it works on and where it reports.
type run struct {
	sp  speaker
	out domain.Output
	in  domain.StepInput
	st  *plannerState
	// ref is when the newest message or answer was written, for resolving dates.
	ref time.Time
}

// Step runs the workflow from where its last checkpoint left it until it asks or finishes.
func (p *EventPlanner) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &run{sp: speaker{ctx: ctx, out: out, pace: p.pace}, out: out, in: in, ref: lastAt(in.History)}
	var prev plannerState
	found, err := domain.LastCheckpoint(in.History, &prev)
	at := lastCheckpointAt(in.History)
	if err != nil || !found {
		// A checkpoint this agent cannot read is as good as none: start afresh.
		found, at = false, -1
	}
	newMessage := in.Trigger == domain.TriggerMessage && len(userMessagesAfter(in.History, at)) > 0
	if !found || prev.RunID != in.RunID || newMessage {
		return r.start(found, prev, at)
	}
	if prev.Done {
		return nil // a re-delivered step of a finished run
	}
	r.st = &prev
	return r.resume(at)
}

// resume applies the answers to the questions the last checkpoint waits on, then goes on.
func (r *run) resume(at int) error {
	asked := questionsAfter(r.in.History, at)
	type answer struct {
		p   pending
		res domain.Resolution
	}
	var answers []answer
	for i, p := range r.st.Pending {
		q, ok := askedWithKey(r.in.History, p.Key)
		if !ok && i < len(asked) {
			q, ok = asked[i], true
		}
		if !ok {
			continue // the step stopped before asking: the phase asks again
		}
		res, ok := resolutionOf(r.in.History, q.ID)
		if !ok {
			return nil // still waiting: this step was delivered twice
		}
		answers = append(answers, answer{p, res})
	}
	r.st.Pending = nil
	for _, a := range answers {
		if stop, err := r.apply(a.p.Topic, a.res); stop || err != nil {
			return err
		}
	}
	return r.drive()
}

// drive runs the phases from the current one until one asks or the plan is done.
func (r *run) drive() error {
	steps := []func() (bool, error){r.venuePhase, r.budgetPhase, r.cateringPhase, r.logisticsPhase, r.finalPhase}
	for r.st.Phase < len(steps) {
		asked, err := steps[r.st.Phase]()
		if asked || err != nil {
			return err
		}
		r.st.Phase++
	}
	return nil
}

// say streams one message by the current phase's speaker (or the coordinator).
func (r *run) say(author, text string) error { return r.sp.say(author, text) }

// author is who speaks in the current phase.
func (r *run) author() string { return phases[min(r.st.Phase, len(phases)-1)].author }

// ask stores the state with the question as pending, then asks it. The checkpoint comes
// first so that the resume always finds what the question was for.
func (r *run) ask(topic string, q domain.Question) (bool, error) {
	r.st.Seq++
	q.Key = fmt.Sprintf("event-planner/%d/%s", r.st.Seq, topic)
	q.Asker = r.author()
	r.st.Pending = []pending{{Key: q.Key, Topic: topic}}
	delete(r.st.Why, triesTopic(topic))
	if err := r.out.Checkpoint(r.st); err != nil {
		return false, err
	}
	r.out.As(q.Asker)
	if _, err := r.out.Ask(q); err != nil {
		return false, fmt.Errorf("ask %s: %w", topic, err)
	}
	return true, nil
}

// triesTopic is the topic whose tries a question counts against: the follow-up offering to
// pick a venue counts with the venue choice.
func triesTopic(topic string) string {
	if topic == "pick" {
		return "venue"
	}
	return topic
}

// begin marks the current phase in progress, once per run; it reports whether this call did.
func (r *run) begin() (bool, error) {
	name := phases[r.st.Phase].step
	if r.st.Started[name] {
		return false, nil
	}
	if r.st.Started == nil {
		r.st.Started = map[string]bool{}
	}
	r.st.Started[name] = true
	return true, r.setStep(r.st.Phase, domain.StepInProgress)
}

// finish marks the current phase done.
func (r *run) finish() error { return r.setStep(r.st.Phase, domain.StepDone) }

// setStep publishes the plan with step i in status, as the phase's speaker.
func (r *run) setStep(i int, status domain.StepStatus) error {
	r.st.Plan.Steps[i].Status = status
	r.out.As(phases[i].author)
	return r.out.Plan(r.st.Plan)
}

// try counts a missing or unusable answer on topic, with the reason to give next time.
func (r *run) try(topic, why string) {
	if r.st.Tries == nil {
		r.st.Tries = map[string]int{}
	}
	r.st.Tries[topic]++
	if why != "" {
		if r.st.Why == nil {
			r.st.Why = map[string]string{}
		}
		r.st.Why[topic] = why
	}
}

// note records a default the planner assumed, for the final plan.
func (r *run) note(topic, text string) {
	if r.st.Notes == nil {
		r.st.Notes = map[string]string{}
	}
	r.st.Notes[topic] = text
}

// lastAt is when the newest message or answer of history was written; zero in tests.
func lastAt(history []domain.Event) time.Time {
	for i := len(history) - 1; i >= 0; i-- {
		ev := history[i]
		if ev.Kind == domain.EventUserMessage && !ev.At.IsZero() {
			return ev.At
		}
		if ev.Kind == domain.EventQuestionResolved && ev.Resolution != nil && !ev.Resolution.At.IsZero() {
			return ev.Resolution.At
		}
	}
	return time.Time{}
}
