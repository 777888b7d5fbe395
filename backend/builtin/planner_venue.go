package builtin

import (
	"fmt"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// venuePhase settles where the event happens: it asks for the city (and head count) when
// missing, then offers three venues, or recommends one outright when the request already
// gave city, head count and budget.
func (r *run) venuePhase() (bool, error) {
	first, err := r.begin()
	if err != nil {
		return false, err
	}
	st, f := r.st, &r.st.Facts
	if st.Venue != nil {
		if first {
			if err := r.say(r.author(), fmt.Sprintf("I'm keeping **%s** (%s).", st.Venue.Name, st.Venue.details())); err != nil {
				return false, err
			}
		}
		return false, r.finish()
	}
	if f.City == "" || f.Guests == 0 {
		if st.Tries["where"] < 2 {
			return r.ask("where", r.whereQuestion())
		}
		var assumed []string
		if f.City == "" {
			f.City = "your city"
			assumed = append(assumed, "illustrative venues in a generic city centre")
		}
		if f.Guests == 0 {
			f.Guests = 30
			assumed = append(assumed, "30 guests")
		}
		text := "I'll go ahead with " + strings.Join(assumed, " and ") + "; tell me the real figures any time and I'll redo the shortlist."
		r.note("where", "Assumed "+strings.Join(assumed, " and ")+".")
		if err := r.say(r.author(), text); err != nil {
			return false, err
		}
	}
	vs := venuesFor(*f)
	best := bestVenue(vs, f.Budget)
	switch {
	case f.BudgetStated && st.Tries["venue"] == 0:
		st.Venue = &best
		text := fmt.Sprintf("With %d guests and %s in %s, I recommend **%s**: %s (%s).\n\n"+
			"The other options I considered:\n\n%s", f.Guests, money(f.Budget), factText(*f, "Where"),
			best.Name, best.Blurb, best.details(), venueTable(vs, best.ID))
		if err := r.say(r.author(), text); err != nil {
			return false, err
		}
	case st.Tries["venue"] == 0:
		text := fmt.Sprintf("Here are three venues in %s for %d guests (illustrative: I have no live listings):\n\n%s",
			factText(*f, "Where"), f.Guests, venueTable(vs, ""))
		if err := r.say(r.author(), text); err != nil {
			return false, err
		}
		return r.ask("venue", r.venueQuestion(vs))
	case st.Tries["venue"] == 1:
		prompt := fmt.Sprintf("Shall I pick the best-rated venue for you? That would be **%s** (%s).", best.Name, best.details())
		if why := st.Why["venue"]; why != "" {
			prompt = why + " " + prompt
		}
		return r.ask("pick", domain.UserInputRequest{Prompt: prompt, RequestType: domain.RequestApproval,
			Context: map[string]any{"venue": best}}.Question())
	default:
		st.Venue = &best
		r.note("venue", fmt.Sprintf("%s was pencilled in by the planner; say if you'd prefer another venue.", best.Name))
		text := fmt.Sprintf("I've pencilled in **%s**, the best-rated option that fits (%s), so the rest of the plan "+
			"can go ahead. Tell me any time if you'd prefer another venue.", best.Name, best.details())
		if err := r.say(r.author(), text); err != nil {
			return false, err
		}
	}
	return false, r.finish()
}

// whereQuestion asks for the city and, when unknown, the head count.
func (r *run) whereQuestion() domain.Question {
	f := r.st.Facts
	var fields []domain.Field
	var want []string
	if f.City == "" {
		fields = append(fields, domain.Field{Name: "city", Label: "City or area", Kind: domain.KindText, Required: true,
			Description: "For example “downtown Seattle”.", MaxLength: intp(80)})
		want = append(want, "where the event should take place")
	}
	if f.Guests == 0 {
		fields = append(fields, domain.Field{Name: "guests", Label: "Number of guests", Kind: domain.KindInteger,
			Required: true, Min: floatp(1), Max: floatp(maxGuests)})
		want = append(want, "how many guests you expect")
	}
	prompt := "To shortlist venues I need to know " + strings.Join(want, " and ") + "."
	switch {
	case r.st.Why["where"] != "":
		prompt = r.st.Why["where"] + " " + prompt
	case r.st.Tries["where"] > 0:
		prompt = "I can't suggest venues without this, and a rough answer is fine. " + prompt
	}
	return domain.UserInputRequest{Prompt: prompt, RequestType: domain.RequestClarification, Fields: fields}.Question()
}

// maxGuests is the largest head count the guests field takes.
const maxGuests = 5000

// venueHold is how long the venues hold a date: the selection expires after it.
const venueHold = 24 * time.Hour

// venueQuestion offers the venues to choose from.
func (r *run) venueQuestion(vs []venue) domain.Question {
	items := make([]any, 0, len(vs))
	for _, v := range vs {
		items = append(items, map[string]any{
			"id": v.ID, "name": v.Name, "capacity": v.Capacity, "price": v.Price, "location": v.Location,
		})
	}
	q := domain.UserInputRequest{
		Prompt: fmt.Sprintf("I found %d venues in %s. Which do you prefer? The venues hold the date for %d hours.",
			len(vs), factText(r.st.Facts, "Where"), int(venueHold.Hours())),
		Context:     map[string]any{"venues": items},
		RequestType: domain.RequestSelection,
	}.Question()
	if !r.ref.IsZero() {
		q.Deadline = r.ref.Add(venueHold)
	}
	return q
}

// venueTable lists venues as a Markdown table, marking the recommended one.
func venueTable(vs []venue, mark string) string {
	var b strings.Builder
	b.WriteString("| Venue | Capacity | Hire fee | Location | Rating |\n| --- | ---: | ---: | --- | ---: |\n")
	for _, v := range vs {
		name := v.Name
		if v.ID == mark {
			name = "**" + name + "** (recommended)"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.1f |\n", name, v.Capacity, money(v.Price), v.Location, v.Rating)
	}
	return b.String()
}

// venueAnswer reads the selection: the "other" text wins and names a venue of the list or
// the person's own; ok is false for an answer that names nothing usable.
func venueAnswer(vs []venue, values map[string]any, city string) (venue, string, bool) {
	if other := strings.TrimSpace(textValue(values, "other")); other != "" {
		for _, v := range vs {
			if strings.EqualFold(v.Name, other) || strings.Contains(strings.ToLower(other), strings.ToLower(v.Name)) {
				return v, "", true
			}
		}
		if vague(other) || len(other) < 3 {
			return venue{}, fmt.Sprintf("I couldn't tell which venue “%s” means.", other), false
		}
		return venue{ID: "custom", Name: other, Location: city, Custom: true}, "", true
	}
	choice := textValue(values, "choice")
	for _, v := range vs {
		if v.ID == choice {
			return v, "", true
		}
	}
	if choice == "" {
		return venue{}, "You didn't pick a venue.", false
	}
	if choice == domain.OtherChoice {
		return venue{}, "You chose something else but didn't say which venue.", false
	}
	return venue{}, fmt.Sprintf("“%s” isn't one of the venues I offered.", choice), false
}

func intp(n int) *int           { return &n }
func floatp(n float64) *float64 { return &n }
