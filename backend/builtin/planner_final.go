package builtin

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// finalPhase is the coordinator's synthesis: the whole plan in one Markdown message.
func (r *run) finalPhase() (bool, error) {
	if _, err := r.begin(); err != nil {
		return false, err
	}
	if err := r.say(r.author(), finalPlan(r.st, r.in.Language)); err != nil {
		return false, err
	}
	if err := r.finish(); err != nil {
		return false, err
	}
	r.st.Done = true
	return false, r.out.Checkpoint(r.st)
}

// noteTopics orders the assumptions in the final plan.
var noteTopics = []string{"where", "venue", "budget", "split", "diet", "date"}

// finalPlan writes the plan: venue, budget split, menu, timeline and what was assumed,
// signed in lang.
func finalPlan(st *plannerState, lang string) string {
	f := st.Facts
	var b strings.Builder
	kind := f.Kind
	if kind == "" {
		kind = "event"
	}
	fmt.Fprintf(&b, "## Your event plan\n\n**%s** for **%d guests** · %s · %s · budget %s\n\n",
		capitalize(kind), f.Guests, factText(f, "Where"), whenText(f), money(f.Budget))

	b.WriteString("### Venue\n\n")
	if v := st.Venue; v != nil && v.Custom {
		fmt.Fprintf(&b, "**%s**, your own choice. Check that it holds %d guests and fits the venue line below.\n\n", v.Name, f.Guests)
	} else if v != nil {
		fmt.Fprintf(&b, "**%s**, %s: %s. Up to %d guests, hire fee about %s, rated %.1f.\n\n",
			v.Name, v.Location, v.Blurb, v.Capacity, money(v.Price), v.Rating)
	}

	s := splits[st.Split]
	fmt.Fprintf(&b, "### Budget\n\n%s\n", s.table(f.Budget))

	perGuest := s.amounts(f.Budget)[1] / max(f.Guests, 1)
	fmt.Fprintf(&b, "### Menu\n\nA %s covering %s, about %s per guest:\n\n%s\n\n",
		mealName(f.Time), dietSummary(f.Diet), money(perGuest), strings.Join(menuFor(f), "\n"))
	if f.DietNotes != "" {
		fmt.Fprintf(&b, "Notes for the caterer: %s\n\n", oneLine(f.DietNotes))
	}

	fmt.Fprintf(&b, "### Timeline\n\n%s\n**Before the day:**\n\n", timelineTable(f.Time))
	for _, c := range checklist {
		fmt.Fprintf(&b, "- %s\n", c)
	}

	var notes []string
	for _, t := range noteTopics {
		if n := st.Notes[t]; n != "" {
			notes = append(notes, "- "+n)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\n### Assumptions\n\n%s\n", strings.Join(notes, "\n"))
	}
	b.WriteString("\n---\n\n" + phrase(lang, "planner.footer"))
	return b.String()
}

// stop ends the workflow at the person's request: remaining steps are skipped.
func (r *run) stop() error {
	for i, s := range r.st.Plan.Steps {
		if s.Status == domain.StepPending || s.Status == domain.StepInProgress {
			r.st.Plan.Steps[i].Status = domain.StepSkipped
		}
	}
	r.st.Done = true
	r.out.As(coordinator)
	if err := r.out.Plan(r.st.Plan); err != nil {
		return err
	}
	if err := r.say(coordinator, "Understood, I've stopped planning here. Send a new message whenever you "+
		"want to pick it up again; I'll remember what you've told me so far."); err != nil {
		return err
	}
	return r.out.Checkpoint(r.st)
}
