package builtin

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// answerFor fills a planner question the way a person would, by its first field.
func answerFor(t *testing.T, q domain.Question) []string {
	t.Helper()
	switch q.Fields[0].Name {
	case "city":
		return []string{"city", "Portland"}
	case "guests":
		return []string{"guests", "30"}
	case "choice":
		return []string{"choice", q.Fields[0].Options[1].Value}
	case "budget":
		return []string{"budget", "2500"}
	case "decision":
		return []string{"decision", "approve"}
	case "dietary":
		return []string{"dietary", "vegan", "dietary", "nut-free", "notes", "Two guests avoid shellfish"}
	case "date":
		return []string{"date", "2030-06-01", "time", "afternoon"}
	}
	t.Fatalf("unexpected question %q with fields %v", q.Message, fieldNames(q))
	return nil
}

// finalPlanOf returns the coordinator's final plan in rec, failing when there is none.
func finalPlanOf(t *testing.T, rec *recorder) string {
	t.Helper()
	for _, m := range rec.messages() {
		if m.Author == coordinator && strings.HasPrefix(m.Text, "## Your event plan") {
			return m.Text
		}
	}
	t.Fatalf("no final plan; transcript:\n%s", rec.transcript())
	return ""
}

func TestEventPlanner_PartyAsksThenPlans(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people")
	var asked []domain.Question
	chosen := ""
	for len(c.pending()) > 0 {
		q := c.only()
		if q.Asker == "" || q.Asker == coordinator {
			t.Errorf("question %q asked by %q, want a specialist", q.Message, q.Asker)
		}
		if len(asked) > 10 {
			t.Fatal("too many questions")
		}
		asked = append(asked, q)
		pairs := answerFor(t, q)
		if pairs[0] == "choice" {
			chosen = strings.SplitN(q.Fields[0].Options[1].Text(), " — ", 2)[0]
		}
		c.answer(form(pairs...))
		c.resume()
	}
	var names []string
	for _, q := range asked {
		names = append(names, q.Fields[0].Name)
	}
	if want := []string{"city", "choice", "budget", "decision", "dietary", "date"}; !slices.Equal(names, want) {
		t.Errorf("asked %v, want %v", names, want)
	}
	plan := finalPlanOf(t, c.last)
	for _, want := range []string{chosen, "Portland", "$2,500", "vegan", "Two guests avoid shellfish", "13:00", "Saturday 1 June 2030"} {
		if want == "" || !strings.Contains(plan, want) {
			t.Errorf("final plan lacks %q:\n%s", want, plan)
		}
	}
	if chosen != "Pearl District Loft" && chosen != "Alberta Arts Hall" {
		t.Errorf("chosen venue %q is not a Portland venue", chosen)
	}
	assertPlanDone(t, c.History)
}

// assertPlanDone checks that the newest plan has every step done.
func assertPlanDone(t *testing.T, history []domain.Event) {
	t.Helper()
	for i := len(history) - 1; i >= 0; i-- {
		if p := history[i].Plan; history[i].Kind == domain.EventPlan {
			for _, s := range p.Steps {
				if s.Status != domain.StepDone {
					t.Errorf("plan step %q is %s, want done", s.Title, s.Status)
				}
			}
			return
		}
	}
	t.Error("no plan published")
}

const seattle = "Plan a corporate team building event for 30 people, budget $3000, downtown Seattle, " +
	"Friday evening in 3 weeks, vegetarian and gluten-free options required"

func TestEventPlanner_DetailedRequestAsksNothing(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	rec := c.send(seattle)
	if rec.Asked != 0 || len(c.pending()) != 0 {
		t.Fatalf("asked %d questions, want none; transcript:\n%s", rec.Asked, rec.transcript())
	}
	plan := finalPlanOf(t, rec)
	for _, want := range []string{"Corporate team building event", "30 guests", "Pioneer Square Loft", "downtown Seattle",
		"Friday, in 3 weeks, evening", "$3,000", "vegetarian and gluten-free", "| 19:30 | Dinner is served |", "nothing was booked"} {
		if !strings.Contains(plan, want) {
			t.Errorf("final plan lacks %q:\n%s", want, plan)
		}
	}
	authors := map[string]bool{}
	for _, m := range rec.messages() {
		authors[m.Author] = true
	}
	for _, ph := range phases {
		if !authors[ph.author] {
			t.Errorf("%s never spoke", ph.author)
		}
	}
	assertPlanDone(t, c.History)
	if strings.Contains(plan, "Assumptions") {
		t.Errorf("plan lists assumptions though everything was given:\n%s", plan)
	}
}

func TestEventPlanner_DeclinedVenueFollowsUp(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people in Chicago")
	if q := c.only(); q.Type != domain.RequestSelection {
		t.Fatalf("first question %q is %s, want the venue selection", q.Message, q.Type)
	}
	c.decline()
	c.resume()
	q := c.only()
	if q.Type != domain.RequestApproval || !strings.Contains(q.Message, "Shall I pick the best-rated venue") {
		t.Fatalf("follow-up is %s %q, want the pick-for-me approval", q.Type, q.Message)
	}
	c.decline()
	rec := c.resume()
	if !strings.Contains(rec.transcript(), "pencilled in **River North Loft**") {
		t.Errorf("second decline did not fall back to the best venue:\n%s", rec.transcript())
	}
	if got := c.only().Fields[0].Name; got != "budget" {
		t.Errorf("after the venue, asked %q, want budget", got)
	}
}

func TestEventPlanner_DefaultsAfterTwoMisses(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party")
	for range 20 {
		if len(c.pending()) == 0 {
			break
		}
		c.decline()
		c.resume()
	}
	plan := finalPlanOf(t, c.last)
	for _, want := range []string{"30 guests", "Old Town Loft", "$3,000", "vegetarian and gluten-free", "a Saturday about four weeks from now, evening", "### Assumptions"} {
		if !strings.Contains(plan, want) {
			t.Errorf("final plan lacks %q:\n%s", want, plan)
		}
	}
}

func TestEventPlanner_OtherVenueIsUsed(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people in Chicago, budget $3000, no dietary restrictions, on 2030-05-04 at 7pm")
	if rec := c.last; rec.Asked != 0 {
		t.Fatalf("asked %d questions for a complete request", rec.Asked)
	}
	c = newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people in Chicago, no dietary restrictions, on 2030-05-04 at 7pm")
	c.answer(form("choice", "west-loop-hall", "other", "The Old Boathouse"))
	c.resume()
	c.answer(form("budget", "3000"))
	c.resume()
	c.answer(form("decision", "approve"))
	plan := finalPlanOf(t, c.resume())
	if !strings.Contains(plan, "**The Old Boathouse**, your own choice") {
		t.Errorf("final plan does not use the other venue:\n%s", plan)
	}
}

func TestEventPlanner_NewMessageUpdatesPlan(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send(seattle)
	rec := c.send("Actually we'll be 45 people")
	if rec.Asked != 0 {
		t.Fatalf("asked %d questions; transcript:\n%s", rec.Asked, rec.transcript())
	}
	if !strings.Contains(rec.transcript(), "- **Guests:** 45") || !strings.Contains(finalPlanOf(t, rec), "45 guests") {
		t.Errorf("update not applied:\n%s", rec.transcript())
	}
	rec = c.send("Thanks!")
	if len(rec.messages()) != 1 || !strings.Contains(rec.transcript(), "still stands") {
		t.Errorf("a message without news should only confirm the plan:\n%s", rec.transcript())
	}
}

func TestEventPlanner_NewMessageWhileWaiting(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people")
	rec := c.send("It's in Boston, budget $4,000")
	if !strings.Contains(rec.transcript(), "**Where:** Boston") || !strings.Contains(rec.transcript(), "Back Bay Loft") {
		t.Errorf("new message not taken in:\n%s", rec.transcript())
	}
	if got := c.only().Fields[0].Name; got != "dietary" {
		t.Errorf("asked %q next, want dietary", got)
	}
}

func TestEventPlanner_RedeliveredStepDoesNothing(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people")
	c.answer(form("city", "Denver"))
	first := c.resume()
	if len(first.Questions()) != 1 {
		t.Fatalf("resume asked %d questions, want 1", len(first.Questions()))
	}
	again := c.deliver(t.Context(), domain.TriggerResume)
	if len(again.Events) != 0 {
		t.Errorf("re-delivered step reported %d events, want none", len(again.Events))
	}
	c.send(seattle)
	again = c.deliver(t.Context(), domain.TriggerRetry)
	if len(again.Events) != 0 {
		t.Errorf("re-delivered finished step reported %d events, want none", len(again.Events))
	}
}
