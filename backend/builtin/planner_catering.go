package builtin

import (
	"fmt"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// cateringPhase settles the menu: it asks about dietary needs when the conversation names none.
func (r *run) cateringPhase() (bool, error) {
	if _, err := r.begin(); err != nil {
		return false, err
	}
	st, f := r.st, &r.st.Facts
	if len(f.Diet) == 0 {
		if st.Tries["diet"] < 2 {
			return r.ask("diet", r.dietQuestion())
		}
		f.Diet = []string{"vegetarian", "gluten-free"}
		r.note("diet", "No dietary needs were given: the menu covers vegetarian and gluten-free guests and labels every dish; confirm needs with the caterer.")
		if err := r.say(r.author(), "I'll plan a menu with vegetarian and gluten-free options and label every dish, "+
			"so guests can choose; tell me about any other needs."); err != nil {
			return false, err
		}
	}
	var b strings.Builder
	perGuest := splits[st.Split].amounts(f.Budget)[1] / max(f.Guests, 1)
	meal := mealName(f.Time)
	if f.Time == "" {
		meal += " for now; I'll adapt it once the time of day is set"
	}
	fmt.Fprintf(&b, "Menu for %d guests (%s), covering %s, at about %s per guest:\n\n%s\n",
		f.Guests, meal, dietSummary(f.Diet), money(perGuest), strings.Join(menuFor(*f), "\n"))
	b.WriteString("\n_V vegetarian · VG vegan · GF gluten-free · NF nut-free_")
	if f.DietNotes != "" {
		fmt.Fprintf(&b, "\n\nNotes for the caterer: %s", oneLine(f.DietNotes))
	}
	if err := r.say(r.author(), b.String()); err != nil {
		return false, err
	}
	return false, r.finish()
}

// dietQuestion asks for dietary needs as a multiselect with free notes.
func (r *run) dietQuestion() domain.Question {
	opts := make([]domain.Option, 0, len(dietOptions))
	for _, d := range dietOptions {
		opts = append(opts, domain.Option{Value: d.Value, Label: d.Label})
	}
	prompt := "Does anyone have dietary needs I should plan the menu around? Tick all that apply, or “" + dietLabel("none") + "”."
	switch {
	case r.st.Why["diet"] != "":
		prompt = r.st.Why["diet"] + " " + prompt
	case r.st.Tries["diet"] > 0:
		prompt = "So that nobody goes hungry I'd like to know about dietary needs before fixing the menu. " +
			"Tick “" + dietLabel("none") + "” if there are none."
	}
	return domain.UserInputRequest{Prompt: prompt, RequestType: domain.RequestClarification, Fields: []domain.Field{
		{Name: "dietary", Label: "Dietary needs", Kind: domain.KindMultiselect, Required: true, Options: opts},
		{Name: "notes", Label: "Anything else the caterer should know", Kind: domain.KindTextarea, MaxLength: intp(1000)},
	}}.Question()
}

// mealName is what the caterer serves at that time of day.
func mealName(timeOfDay string) string {
	switch timeOfDay {
	case "morning":
		return "breakfast"
	case "afternoon":
		return "lunch buffet"
	}
	return "dinner buffet"
}

// logisticsPhase settles the day and time and drafts the timeline.
func (r *run) logisticsPhase() (bool, error) {
	if _, err := r.begin(); err != nil {
		return false, err
	}
	st, f := r.st, &r.st.Facts
	if !f.dayKnown() || f.Time == "" {
		if st.Tries["date"] < 2 {
			return r.ask("date", r.dateQuestion())
		}
		r.defaultDay()
		if err := r.say(r.author(), fmt.Sprintf("I'll pencil in %s; change it any time.", whenText(*f))); err != nil {
			return false, err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Timeline for %s at %s:\n\n%s\nBefore the day:\n\n", whenText(*f), venueName(st.Venue), timelineTable(f.Time))
	for _, c := range checklist {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	if err := r.say(r.author(), b.String()); err != nil {
		return false, err
	}
	return false, r.finish()
}

// defaultDay assumes a Saturday evening about four weeks out.
func (r *run) defaultDay() {
	f := &r.st.Facts
	if !f.dayKnown() {
		if r.ref.IsZero() {
			f.Day = "a Saturday about four weeks from now"
		} else {
			f.Date = nextWeekday(dateOnly(r.ref).AddDate(0, 0, 27), time.Saturday).Format(time.DateOnly)
		}
	}
	if f.Time == "" {
		f.Time = "evening"
	}
	r.note("date", "The date and time ("+whenText(*f)+") were pencilled in by the planner.")
}

// dateQuestion asks for the date and time of day, prefilled with what is known.
func (r *run) dateQuestion() domain.Question {
	f := r.st.Facts
	date := domain.Field{Name: "date", Label: "Date", Kind: domain.KindDate, Required: true, MinDate: domain.Today}
	date.Description = dateHelp(date)
	// A day already past is not offered: the form would refuse it.
	if d := firstNonEmpty(f.Date, f.DateHint); d != "" && (r.ref.IsZero() || d >= r.ref.Local().Format(time.DateOnly)) {
		date.Default = d
	}
	tod := domain.Field{Name: "time", Label: "Time of day", Kind: domain.KindSelect, Required: true, Options: []domain.Option{
		{Value: "morning", Label: "Morning"}, {Value: "afternoon", Label: "Afternoon"}, {Value: "evening", Label: "Evening"},
	}}
	if f.Time != "" {
		tod.Default = f.Time
	}
	prompt := "When is the event? Pick the date and the time of day and I'll draft the timeline."
	if f.Day != "" {
		prompt = fmt.Sprintf("You said “%s”: which date is that, and what time of day? Then I'll draft the timeline.", f.Day)
	}
	switch {
	case r.st.Why["date"] != "":
		prompt = r.st.Why["date"] + " " + prompt
	case r.st.Tries["date"] > 0:
		prompt = "I need a date to build the timeline; a tentative one is fine. " + prompt
	}
	return domain.UserInputRequest{Prompt: prompt, RequestType: domain.RequestClarification,
		Fields: []domain.Field{date, tod}}.Question()
}

// dateHelp says which days a date field takes, written from the field's own limits.
func dateHelp(f domain.Field) string {
	switch {
	case f.MinDate == domain.Today && f.MaxDate == "":
		return "Today or later."
	case f.MinDate == domain.Today:
		return "From today to " + formatDay(f.MaxDate) + "."
	}
	return ""
}

// venueName names the venue, or a placeholder before one is chosen.
func venueName(v *venue) string {
	if v == nil {
		return "the venue"
	}
	return v.Name
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// oneLine folds a free-text answer onto one line, for quoting it in a sentence.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
