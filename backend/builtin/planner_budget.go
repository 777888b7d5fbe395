package builtin

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// budgetPhase settles the budget and its split: it asks for a budget when none was given
// (or the one given cannot cover the guests), and for approval of the split it proposes
// when the budget came from a form rather than the request.
func (r *run) budgetPhase() (bool, error) {
	if _, err := r.begin(); err != nil {
		return false, err
	}
	st, f := r.st, &r.st.Facts
	least := leastBudget(f.Guests)
	if f.Budget == 0 || f.Budget < least {
		if st.Tries["budget"] < 2 {
			return r.ask("budget", r.budgetQuestion(least))
		}
		text := ""
		if f.Budget == 0 {
			f.Budget = roundUp(f.Guests*100, 100)
			text = fmt.Sprintf("I'll work with %s (about $100 per guest), a typical figure for an event like this.", money(f.Budget))
		} else {
			f.Budget = least
			text = fmt.Sprintf("I'll plan with %s, the least that covers %d guests at $%d each.", money(f.Budget), f.Guests, minPerGuest)
		}
		st.SplitOK, st.Split = true, 0
		r.note("budget", text+" Tell me your real budget and I'll redo the numbers.")
		if err := r.say(r.author(), text+" Tell me if that's off and I'll redo the numbers."); err != nil {
			return false, err
		}
	}
	if !st.SplitOK && f.BudgetStated {
		st.SplitOK = true
	}
	if !st.SplitOK {
		if st.Tries["split"] < 2 {
			return r.ask("split", r.splitQuestion())
		}
		st.SplitOK, st.Split = true, 0
		r.note("split", "The budget split is the planner's usual one; you did not approve it.")
		if err := r.say(r.author(), "I'll keep the usual split as a starting point; you can move money between the lines when you book."); err != nil {
			return false, err
		}
	}
	s := splits[st.Split]
	var b strings.Builder
	fmt.Fprintf(&b, "Here is the %s split of your %s budget:\n\n%s", s.Name, money(f.Budget), s.table(f.Budget))
	a := s.amounts(f.Budget)
	if v := st.Venue; v != nil && !v.Custom && v.Price > a[0] {
		fmt.Fprintf(&b, "\n%s's hire fee (%s) is above the venue line (%s): the contingency can cover the difference, "+
			"or the venue specialist can suggest a cheaper option.\n", v.Name, money(v.Price), money(a[0]))
	}
	fmt.Fprintf(&b, "\nThat leaves about %s per guest for catering.", money(a[1]/max(f.Guests, 1)))
	if err := r.say(r.author(), b.String()); err != nil {
		return false, err
	}
	return false, r.finish()
}

// budgetQuestion asks for the total budget, explaining why when asking again.
func (r *run) budgetQuestion(least int) domain.Question {
	f := r.st.Facts
	prompt := "What is your total budget for the event, in US dollars? I'll split it across venue, catering, entertainment and a contingency."
	switch {
	case f.Budget > 0 && f.Budget < least:
		prompt = fmt.Sprintf("A budget of %s for %d guests is about %s per guest, which won't cover a venue and food. "+
			"What budget can you work with? For %d guests I'd suggest at least %s.",
			money(f.Budget), f.Guests, money(f.Budget/max(f.Guests, 1)), f.Guests, money(least))
	case r.st.Why["budget"] != "":
		prompt = r.st.Why["budget"] + " " + prompt
	case r.st.Tries["budget"] > 0:
		prompt = "I need a budget to plan the spending; a rough figure is fine. What is the most you'd like to spend, in US dollars?"
	}
	return domain.UserInputRequest{Prompt: prompt, RequestType: domain.RequestClarification, Fields: []domain.Field{
		budgetField(least, f.Guests),
	}}.Question()
}

// budgetField asks for a budget from least to maxBudget; its help text is written from the
// field's own limits, so that what it says is what the form takes.
func budgetField(least, guests int) domain.Field {
	fld := domain.Field{Name: "budget", Label: "Budget (USD)", Kind: domain.KindNumber, Required: true,
		Min: floatp(float64(least)), Max: floatp(maxBudget)}
	fld.Description = fmt.Sprintf("At least %s for %d guests, at most %s.", money(int(*fld.Min)), guests, money(int(*fld.Max)))
	return fld
}

// splitQuestion asks to approve the proposed split, shown as a table.
func (r *run) splitQuestion() domain.Question {
	st := r.st
	s := splits[st.Split]
	lead := fmt.Sprintf("Here is how I'd split your %s budget:", money(st.Facts.Budget))
	if st.Split > 0 {
		lead = "Here is an alternative that puts more into food:"
	}
	if why := st.Why["split"]; why != "" {
		lead = why + " " + lead
	}
	prompt := lead + "\n\n" + s.table(st.Facts.Budget) + "\nDo you approve this split? (Cancel stops the planning here.)"
	q := domain.UserInputRequest{Prompt: prompt, RequestType: domain.RequestApproval,
		Context: map[string]any{"split": s.Pct, "budget": st.Facts.Budget}}.Question()
	q.AllowCancel = true
	return q
}
