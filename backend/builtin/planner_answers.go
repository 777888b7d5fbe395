package builtin

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// apply takes one resolved question into the state. A declined or expired question, or an
// unusable answer, counts as a try: the phase then asks again or falls back to a default.
// stop is true when the workflow must not go on (the question was cancelled or superseded).
func (r *run) apply(topic string, res domain.Resolution) (stop bool, err error) {
	switch res.Outcome {
	case domain.Superseded:
		return true, nil // a newer message started a newer run, which carries on
	case domain.Cancelled:
		return true, r.stop()
	case domain.Answered:
	default:
		why := ""
		if res.Outcome == domain.Expired {
			why = "The last question expired before an answer came."
		}
		r.try(triesTopic(topic), why)
		return false, nil
	}
	v := res.Values
	f := &r.st.Facts
	ack := ""
	switch topic {
	case "where":
		if s, ok := v["city"]; ok {
			name, area, ok := cityAnswer(fmt.Sprint(s))
			if !ok {
				r.try("where", fmt.Sprintf("I couldn't read a place from “%s”.", oneLine(fmt.Sprint(s))))
				return false, nil
			}
			f.City, f.Area = name, area
		}
		if n, ok := numberValue(v, "guests"); ok && n >= 1 {
			f.Guests = int(n)
		}
		ack = "Thanks, that's what I needed."
	case "venue":
		chosen, why, ok := venueAnswer(venuesFor(*f), v, factText(*f, "Where"))
		if !ok {
			r.try("venue", why)
			return false, nil
		}
		r.st.Venue = &chosen
		ack = fmt.Sprintf("Great choice: **%s**.", chosen.Name)
	case "pick":
		if textValue(v, "decision") != "approve" {
			r.try("venue", "")
			return false, nil
		}
		best := bestVenue(venuesFor(*f), f.Budget)
		r.st.Venue = &best
		ack = fmt.Sprintf("Done: I picked **%s**.", best.Name)
	case "budget":
		n, ok := numberValue(v, "budget")
		if !ok || n < 1 || n > maxBudget {
			r.try("budget", "I couldn't read a budget from that answer.")
			return false, nil
		}
		f.Budget, f.BudgetStated = int(n+0.5), false
		if f.Budget < leastBudget(f.Guests) {
			r.try("budget", "")
			return false, nil
		}
		ack = fmt.Sprintf("Thanks: %s it is.", money(f.Budget))
	case "split":
		if textValue(v, "decision") == "approve" {
			r.st.SplitOK = true
			ack = "Approved, thanks."
			break
		}
		why := "You turned the split down."
		if c := oneLine(textValue(v, "comment")); c != "" {
			why = fmt.Sprintf("You turned the split down (“%s”).", c)
		}
		if r.st.Split+1 < len(splits) {
			r.st.Split++
		}
		r.try("split", why)
		return false, nil
	case "diet":
		diet := listValue(v, "dietary")
		notes := strings.TrimSpace(textValue(v, "notes"))
		if len(diet) == 0 {
			diet = dietIn(strings.ToLower(notes))
		}
		if len(diet) == 0 {
			r.try("diet", "You didn't tick anything.")
			return false, nil
		}
		if len(diet) > 1 {
			diet = slices.DeleteFunc(slices.Clone(diet), func(d string) bool { return d == "none" })
		}
		f.Diet, f.DietNotes = diet, notes
		ack = fmt.Sprintf("Thanks: I'll plan for %s.", dietSummary(diet))
	case "date":
		day, err := time.Parse(time.DateOnly, textValue(v, "date"))
		if err != nil {
			r.try("date", "I couldn't read that date.")
			return false, nil
		}
		// The form refuses days before today on the server's clock; this catches the answers
		// to questions asked before it did.
		if ref := res.At; !ref.IsZero() && day.Before(dateOnly(ref.Local())) {
			r.try("date", fmt.Sprintf("%s is in the past.", formatDay(day.Format(time.DateOnly))))
			return false, nil
		}
		f.Date, f.Day = day.Format(time.DateOnly), ""
		if t := textValue(v, "time"); t != "" {
			f.Time = t
		}
		ack = fmt.Sprintf("Thanks: %s.", whenText(*f))
	default:
		return false, nil // a topic of an older version of this agent: nothing to take
	}
	return false, r.say(r.author(), ack)
}
