package builtin

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

// act is one way a person resolves the pending question in a scripted conversation.
type act struct {
	outcome domain.Outcome // Answered when empty
	pairs   []string
}

func TestEventPlanner_FollowUps(t *testing.T) {
	const chicago = "Plan a party for 30 people in Chicago"
	pick := []string{"choice", "river-north-loft"}
	tests := []struct {
		name       string
		message    string
		acts       []act
		wantType   domain.RequestType
		wantField  string
		wantPrompt string
	}{
		{"no city asks where", "Plan a party for 30 people", nil, domain.RequestClarification, "city", "where the event should take place"},
		{"no head count asks it", "Plan a party in Chicago", nil, domain.RequestClarification, "guests", "how many guests"},
		{"declined city asks again", "Plan a party for 30 people", []act{{outcome: domain.Declined}},
			domain.RequestClarification, "city", "I can't suggest venues without this"},
		{"unreadable city asks again", "Plan a party for 30 people", []act{{pairs: []string{"city", "???"}}},
			domain.RequestClarification, "city", "couldn't read a place"},
		{"vague other venue offers to pick", chicago, []act{{pairs: []string{"choice", "river-north-loft", "other", "not sure"}}},
			domain.RequestApproval, "decision", "couldn't tell which venue “not sure” means. Shall I pick"},
		{"something else without saying what", chicago, []act{{pairs: []string{"choice", domain.OtherChoice}}},
			domain.RequestApproval, "decision", "You chose something else but didn't say which venue. Shall I pick"},
		{"stated budget too small", chicago + ", budget $200", nil,
			domain.RequestClarification, "budget", "A budget of $200 for 30 guests is about $6 per guest"},
		{"declined budget asks again", chicago, []act{{pairs: pick}, {outcome: domain.Declined}},
			domain.RequestClarification, "budget", "a rough figure is fine"},
		{"rejected split offers another", chicago, []act{{pairs: pick}, {pairs: []string{"budget", "3000"}},
			{pairs: []string{"decision", "reject", "comment", "Food matters most"}}},
			domain.RequestApproval, "decision", "You turned the split down (“Food matters most”). Here is an alternative that puts more into food"},
		{"expired diet asks again", chicago + ", budget $3000", []act{{outcome: domain.Expired}},
			domain.RequestClarification, "dietary", "expired"},
		{"declined date asks again", chicago + ", budget $3000, no dietary restrictions", []act{{outcome: domain.Declined}},
			domain.RequestClarification, "date", "a tentative one is fine"},
		{"vague day asks for the date", chicago + ", budget $3000, vegan, next Friday", nil,
			domain.RequestClarification, "date", "You said “next Friday”"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConvo(t, NewEventPlanner(Options{}))
			c.send(tt.message)
			for _, a := range tt.acts {
				c.act(a)
				c.resume()
			}
			q := c.only()
			if q.Type != tt.wantType || q.Fields[0].Name != tt.wantField || !strings.Contains(q.Message, tt.wantPrompt) {
				t.Errorf("asked %s %v %q; want %s [%s ...] containing %q", q.Type, fieldNames(q), q.Message, tt.wantType, tt.wantField, tt.wantPrompt)
			}
		})
	}
}

// act resolves the pending question as a says.
func (c *convo) act(a act) {
	c.t.Helper()
	switch a.outcome {
	case "", domain.Answered:
		c.answer(form(a.pairs...))
	default:
		c.Resolve(domain.Resolution{QuestionID: c.only().ID, Outcome: a.outcome})
	}
}

func TestEventPlanner_CancelledStops(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people")
	c.act(act{outcome: domain.Cancelled})
	rec := c.resume()
	if len(c.pending()) != 0 || !strings.Contains(rec.transcript(), "stopped planning") {
		t.Fatalf("cancel did not stop the workflow:\n%s", rec.transcript())
	}
	var last *domain.Plan
	for _, ev := range rec.Events {
		if ev.Kind == domain.EventPlan {
			last = ev.Plan
		}
	}
	if last == nil || last.Steps[0].Status != domain.StepSkipped || last.Steps[4].Status != domain.StepSkipped {
		t.Errorf("plan after cancel: %+v", last)
	}
	if again := c.deliver(t.Context(), domain.TriggerResume); len(again.Events) != 0 {
		t.Errorf("stopped run reported %d more events", len(again.Events))
	}
}

func TestEventPlanner_VenueHoldAndCancellableSplit(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	asked := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	c.History = append(c.History, domain.Event{Kind: domain.EventUserMessage, Text: "Plan a party for 30 people in Chicago", At: asked})
	c.Run++
	c.stepNow(domain.TriggerMessage)
	venue := c.only()
	if venue.Type != domain.RequestSelection || !venue.Deadline.Equal(asked.Add(24*time.Hour)) {
		t.Fatalf("venue question = %+v, want a selection with a deadline", venue)
	}
	c.answer(url.Values{"choice": {"river-north-loft"}})
	c.resume()
	c.answer(url.Values{"budget": {"3000"}})
	c.resume()
	split := c.only()
	if split.Type != domain.RequestApproval || !split.AllowCancel {
		t.Fatalf("split question = %+v, want a cancellable approval", split)
	}
	c.Resolve(domain.Resolution{QuestionID: split.ID, Outcome: domain.Cancelled})
	rec := c.resume()
	if len(c.pending()) != 0 {
		t.Fatalf("after cancel the planner still asks: %+v", c.pending())
	}
	_ = rec
}
