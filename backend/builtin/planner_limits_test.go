package builtin

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

// fill answers a planner question as a person keeping to the form's own limits would: the
// prefill where there is one, else the least each required field takes.
func fill(t *testing.T, q domain.Question) url.Values {
	t.Helper()
	form := url.Values{}
	for _, f := range q.Fields {
		if d := domain.FieldDefault(f); len(d) > 0 {
			form[f.Name] = d
			continue
		}
		if !f.Required {
			continue
		}
		switch f.Kind {
		case domain.KindNumber, domain.KindInteger:
			form.Set(f.Name, "1")
			if f.Min != nil {
				form.Set(f.Name, num(*f.Min))
			}
		case domain.KindSelect, domain.KindMultiselect:
			form.Set(f.Name, f.Options[0].Value)
		case domain.KindDate:
			form.Set(f.Name, time.Now().AddDate(0, 1, 0).Format(time.DateOnly))
		case domain.KindText, domain.KindTextarea:
			form.Set(f.Name, "Portland")
		default:
			t.Fatalf("no answer for the %s field %q", f.Kind, f.Name)
		}
	}
	return form
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// plannerQuestions collects every question the planner asks: a run that needs everything,
// the offer to pick the venue, and the budget asked again after a message states too little.
func plannerQuestions(t *testing.T) []domain.Question {
	t.Helper()
	var out []domain.Question
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party")
	for len(c.pending()) > 0 {
		if len(out) > 10 {
			t.Fatal("too many questions")
		}
		q := c.only()
		out = append(out, q)
		c.answer(fill(t, q))
		c.resume()
	}
	if len(out) != 6 {
		t.Fatalf("asked %d questions, want where, venue, budget, split, diet and date", len(out))
	}
	c = newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people in Chicago")
	c.decline()
	c.resume()
	out = append(out, c.only())
	c = newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people in Chicago, budget $200")
	return append(out, c.only())
}

var moneyRe = regexp.MustCompile(`\$[\d,]+`)

// Every planner field says in its help text what its form takes, and takes what it says:
// number limits are the amounts the help names, a date is today or later, a prefill passes
// its own form, and the options a prompt names are options of its form.
func TestEventPlanner_HelpSaysWhatTheFormTakes(t *testing.T) {
	today := time.Now()
	for _, q := range plannerQuestions(t) {
		for _, f := range q.Fields {
			one := domain.Question{Fields: []domain.Field{f}}
			takes := func(v ...string) bool {
				_, errs := domain.Validate(one, url.Values{f.Name: v})
				return errs == nil
			}
			where := q.Key + " " + f.Name
			if d := domain.FieldDefault(f); len(d) > 0 && !takes(d...) {
				t.Errorf("%s: the prefill %q is refused by its own form", where, d)
			}
			switch f.Kind {
			case domain.KindNumber, domain.KindInteger:
				var limits []string
				if f.Min != nil {
					limits = append(limits, money(int(*f.Min)))
					if !takes(num(*f.Min)) || takes(num(*f.Min-1)) {
						t.Errorf("%s: the minimum %v is not where the form's answers start", where, *f.Min)
					}
				}
				if f.Max != nil {
					limits = append(limits, money(int(*f.Max)))
					if !takes(num(*f.Max)) || takes(num(*f.Max+1)) {
						t.Errorf("%s: the maximum %v is not where the form's answers end", where, *f.Max)
					}
				}
				for _, m := range moneyRe.FindAllString(f.Description, -1) {
					if !strings.Contains(strings.Join(limits, " "), m) {
						t.Errorf("%s: the help %q names %s, but the form's limits are %v", where, f.Description, m, limits)
					}
				}
			case domain.KindDate:
				if !takes(today.Format(time.DateOnly)) || takes(today.AddDate(0, 0, -1).Format(time.DateOnly)) {
					t.Errorf("%s: the form takes a day in the past or refuses today", where)
				}
				if f.MinDate != domain.Today || !strings.Contains(f.Description, "Today") {
					t.Errorf("%s: min %q, help %q; want today and a help that says so", where, f.MinDate, f.Description)
				}
			}
		}
		if strings.Contains(q.Message, "Tick") {
			for _, m := range regexp.MustCompile(`“([^”]+)”`).FindAllStringSubmatch(q.Message, -1) {
				if !hasLabel(q, m[1]) {
					t.Errorf("%s: the prompt names “%s”, which is not an option", q.Key, m[1])
				}
			}
		}
	}
}

func hasLabel(q domain.Question, label string) bool {
	for _, f := range q.Fields {
		for _, o := range f.Options {
			if o.Text() == label {
				return true
			}
		}
	}
	return false
}

// The budget form refuses less than covers the guests, with the amount its help names, so
// that an answer is never taken only to be asked for again.
func TestEventPlanner_BudgetFormRefusesTooLittle(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people in Chicago")
	c.answer(form("choice", "river-north-loft"))
	c.resume()
	q := c.only()
	if got := q.Fields[0].Description; !strings.Contains(got, "At least $800 for 30 guests") {
		t.Errorf("budget help = %q, want at least $800", got)
	}
	if _, errs := domain.Validate(q, form("budget", "300")); errs["budget"] != "Must be between 800 and 10,000,000." {
		t.Errorf("300 for 30 guests: got %v, want the form to refuse it", errs)
	}
	c.answer(form("budget", "800"))
	c.resume()
	if got := c.only().Fields[0].Name; got != "decision" {
		t.Errorf("after a budget of $800 the planner asks %q, want the split", got)
	}
}

// The date form refuses a day in the past next to the field, and takes today: the planner
// never receives a past date only to ask again.
func TestEventPlanner_DateFormRefusesThePast(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.send("Plan a party for 30 people in Chicago, budget $3000, no dietary restrictions")
	q := c.only()
	if q.Fields[0].Name != "date" {
		t.Fatalf("asked %v, want the date", fieldNames(q))
	}
	now := time.Now()
	yesterday := now.AddDate(0, 0, -1).Format(time.DateOnly)
	_, errs := domain.Validate(q, form("date", yesterday, "time", "evening"))
	if want := "Must be today (" + now.Format("2 January 2006") + ") or later."; errs["date"] != want || len(errs) != 1 {
		t.Errorf("yesterday: got %v, want only the date refused with %q", errs, want)
	}
	c.answer(form("date", now.Format(time.DateOnly), "time", "evening"))
	rec := c.resume()
	if len(c.pending()) != 0 || strings.Contains(rec.transcript(), "in the past") {
		t.Errorf("today was not taken:\n%s", rec.transcript())
	}
}
