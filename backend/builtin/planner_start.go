package builtin

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// start begins a run: the facts of the earlier runs (from their checkpoint) updated with
// what the new messages say, an acknowledgement and the plan, then the phases.
func (r *run) start(found bool, prev plannerState, at int) error {
	st := &plannerState{RunID: r.in.RunID, Plan: domain.Plan{Title: "Event plan"}}
	for _, ph := range phases {
		st.Plan.Steps = append(st.Plan.Steps, domain.PlanStep{Title: ph.step, Status: domain.StepPending})
	}
	f := facts{}
	if found {
		st.Seq, f, st.Venue, st.SplitOK, st.Split, st.Notes = prev.Seq, prev.Facts, prev.Venue, prev.SplitOK, prev.Split, prev.Notes
	}
	for _, m := range userMessagesAfter(r.in.History, at) {
		f = f.merge(extractFacts(messageText(m), m.At))
	}
	r.st = st
	st.Facts = f
	if !found {
		return r.greet()
	}
	changes := changedFacts(prev.Facts, f)
	r.keepDecisions(changes)
	var b strings.Builder
	switch {
	case len(changes) == 0 && prev.Done:
		st.Done = true
		st.Phase = len(phases)
		for i := range st.Plan.Steps {
			st.Plan.Steps[i].Status = domain.StepDone
		}
		if err := r.say(coordinator, "The plan above still stands. Tell me what to change (guests, budget, "+
			"city, date and time, or dietary needs) and I'll have the specialists update it."); err != nil {
			return err
		}
		return r.out.Checkpoint(st)
	case len(changes) == 0:
		b.WriteString("Let's pick up where we left off.\n")
	default:
		b.WriteString("Got it, I'll update the plan with:\n\n")
		for _, c := range changes {
			fmt.Fprintf(&b, "- **%s:** %s\n", c, factText(f, c))
		}
	}
	if err := r.say(coordinator, b.String()); err != nil {
		return err
	}
	if err := r.publishPlan(); err != nil {
		return err
	}
	return r.drive()
}

// greet is the coordinator's first answer: what it understood and who will do what.
func (r *run) greet() error {
	f := r.st.Facts
	var b strings.Builder
	lang := r.in.Language
	b.WriteString(phrase(lang, "planner.greeting") + "\n\n" + phrase(lang, "planner.so_far") + "\n\n")
	missing := 0
	for _, c := range factNames {
		text := factText(f, c)
		if text == "" {
			text, missing = "_not given yet_", missing+1
		}
		fmt.Fprintf(&b, "- **%s:** %s\n", c, text)
	}
	if missing > 0 {
		b.WriteString("\nThe specialists will ask you for what's missing as they go.")
	} else {
		b.WriteString("\nThat's everything the specialists need, so this should run straight through.")
	}
	if err := r.say(coordinator, b.String()); err != nil {
		return err
	}
	if err := r.publishPlan(); err != nil {
		return err
	}
	return r.drive()
}

// publishPlan shows the plan as it stands, by the coordinator.
func (r *run) publishPlan() error {
	r.out.As(coordinator)
	return r.out.Plan(r.st.Plan)
}

// keepDecisions keeps the venue and budget split of earlier runs unless what changed
// makes them wrong, and forgets the defaults the person has now replaced.
func (r *run) keepDecisions(changes []string) {
	st, f := r.st, r.st.Facts
	for _, c := range changes {
		switch c {
		case "Where":
			st.Venue = nil
			delete(st.Notes, "where")
			delete(st.Notes, "venue")
		case "Guests":
			if st.Venue != nil && !st.Venue.Custom && st.Venue.Capacity < f.Guests {
				st.Venue = nil
				delete(st.Notes, "venue")
			}
			delete(st.Notes, "where")
		case "Budget":
			st.SplitOK, st.Split = false, 0
			delete(st.Notes, "budget")
			delete(st.Notes, "split")
		case "When":
			delete(st.Notes, "date")
		case "Dietary needs":
			delete(st.Notes, "diet")
		}
	}
}

// factNames are the facts the coordinator reports, in order.
var factNames = []string{"Event", "Guests", "Budget", "Where", "When", "Dietary needs"}

// factText is one fact as the person reads it, "" when unknown.
func factText(f facts, name string) string {
	switch name {
	case "Event":
		return f.Kind
	case "Guests":
		if f.Guests > 0 {
			return fmt.Sprint(f.Guests)
		}
	case "Budget":
		if f.Budget > 0 {
			return money(f.Budget)
		}
	case "Where":
		if f.City != "" && f.Area == "downtown" {
			return "downtown " + f.City
		}
		return f.City
	case "When":
		return whenText(f)
	case "Dietary needs":
		if len(f.Diet) > 0 {
			return dietSummary(f.Diet)
		}
	}
	return ""
}

// whenText is the day and time of the event as the person reads it.
func whenText(f facts) string {
	day := f.Day
	if f.Date != "" {
		day = formatDay(f.Date)
	}
	switch {
	case day != "" && f.Time != "":
		return day + ", " + f.Time
	case day != "":
		return day
	case f.Time != "":
		return "in the " + f.Time + ", day not set"
	}
	return ""
}

// changedFacts names the facts that differ between old and f.
func changedFacts(old, f facts) []string {
	var out []string
	for _, c := range factNames {
		if factText(old, c) != factText(f, c) {
			out = append(out, c)
		}
	}
	return out
}
