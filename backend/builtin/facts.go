package builtin

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// facts is what the event planner knows about the event. Zero values mean "not known yet".
// It is part of every checkpoint, so it must stay plain JSON.
type facts struct {
	Kind   string `json:"kind,omitempty"`
	Guests int    `json:"guests,omitempty"`
	// Budget is in US dollars; BudgetStated says the person wrote it in a message (the
	// budget specialist then allocates it without asking for approval).
	Budget       int    `json:"budget,omitempty"`
	BudgetStated bool   `json:"budget_stated,omitempty"`
	City         string `json:"city,omitempty"`
	Area         string `json:"area,omitempty"`
	// Date is an ISO date when known; Day is a specific day as the person said it when it
	// could not be resolved to a date; DateHint is a vague "in 3 weeks", resolved.
	Date     string `json:"date,omitempty"`
	Day      string `json:"day,omitempty"`
	DateHint string `json:"date_hint,omitempty"`
	// Time is morning, afternoon or evening.
	Time      string   `json:"time,omitempty"`
	Diet      []string `json:"diet,omitempty"`
	DietNotes string   `json:"diet_notes,omitempty"`
}

// dayKnown reports whether the planner knows which day the event is on.
func (f facts) dayKnown() bool { return f.Date != "" || f.Day != "" }

// extractFacts reads what a message says about the event; ref is when it was written
// (zero when unknown), for resolving "next Saturday".
func extractFacts(text string, ref time.Time) facts {
	lower := strings.ToLower(text)
	f := facts{Kind: eventKind(lower), Guests: guestCount(lower)}
	f.Budget = budgetAmount(lower)
	f.BudgetStated = f.Budget > 0
	f.City, f.Area = cityIn(text)
	f.Date, f.Day, f.DateHint = dayIn(lower, ref)
	f.Time = timeOfDay(lower)
	f.Diet = dietIn(lower)
	return f
}

// merge overlays what newer knows onto f: a later message corrects an earlier one.
func (f facts) merge(newer facts) facts {
	if newer.Kind != "" {
		f.Kind = newer.Kind
	}
	if newer.Guests > 0 {
		f.Guests = newer.Guests
	}
	if newer.Budget > 0 {
		f.Budget, f.BudgetStated = newer.Budget, newer.BudgetStated
	}
	if newer.City != "" {
		f.City, f.Area = newer.City, newer.Area
	}
	if newer.dayKnown() {
		f.Date, f.Day = newer.Date, newer.Day
	}
	if newer.DateHint != "" {
		f.DateHint = newer.DateHint
	}
	if newer.Time != "" {
		f.Time = newer.Time
	}
	if len(newer.Diet) > 0 {
		f.Diet = newer.Diet
	}
	if newer.DietNotes != "" {
		f.DietNotes = newer.DietNotes
	}
	return f
}

// eventKinds are the kinds of event the planner recognises, most specific first.
var eventKinds = []string{
	"team building event", "team-building event", "team building", "team-building",
	"birthday party", "holiday party", "farewell party", "retirement party", "launch party",
	"wedding reception", "wedding", "conference", "offsite", "workshop", "meetup", "reception",
	"dinner", "lunch", "celebration", "party", "gathering", "event",
}

func eventKind(lower string) string {
	for _, k := range eventKinds {
		if containsWord(lower, k) {
			if strings.HasPrefix(k, "team") && !strings.HasSuffix(k, "event") {
				k += " event"
			}
			k = strings.ReplaceAll(k, "team-building", "team building")
			if containsWord(lower, "corporate") {
				k = "corporate " + k
			}
			return k
		}
	}
	return ""
}

// containsWord reports whether phrase occurs in s with no letters directly around it.
func containsWord(s, phrase string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], phrase)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(phrase)
		if (j == 0 || !isLetter(s[j-1])) && (end == len(s) || !isLetter(s[end])) {
			return true
		}
		i = j + 1
	}
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

var (
	peopleWords  = `people|persons?|guests|attendees|participants|pax|employees|colleagues|friends|coworkers|co-workers|engineers|developers|staff|members|adults|kids|children|ppl|of us`
	guestsBefore = regexp.MustCompile(`\b(\d{1,5}|[a-z]+(?:-[a-z]+)?)\s*(?:-\s*)?(?:` + peopleWords + `)\b`)
	peopleNext   = regexp.MustCompile(`^(?:` + peopleWords + `)$`)
	guestsFor    = regexp.MustCompile(`\b(?:for|with|team of|group of|party of)\s+(?:about\s+|around\s+|roughly\s+|approximately\s+|~\s*)?(\d{1,5})\b(\s*[a-z$%]*)`)
	numberWords  = map[string]int{
		"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
		"ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "twenty-five": 25,
		"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
		"hundred": 100, "dozen": 12,
	}
)

// guestCount reads a head count: "30 people", "thirty guests", "for 30".
func guestCount(lower string) int {
	for _, m := range guestsBefore.FindAllStringSubmatch(lower, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n
		}
		if n := numberWords[m[1]]; n > 0 {
			return n
		}
	}
	for _, m := range guestsFor.FindAllStringSubmatch(lower, -1) {
		next := strings.TrimSpace(m[2])
		if next != "" && !peopleNext.MatchString(next) {
			continue // "for 3 weeks", "of 3000 dollars", "for 7pm"
		}
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

var (
	budgetDollar  = regexp.MustCompile(`\$\s*(\d[\d,]*(?:\.\d+)?)\s*(k|thousand)?\b`)
	budgetCurr    = regexp.MustCompile(`\b(\d[\d,]*(?:\.\d+)?)\s*(k|thousand)?\s*(?:dollars|usd|bucks)\b`)
	budgetWord    = regexp.MustCompile(`\bbudget(?:\s+(?:of|is|around|about|up\s+to|under|max|:)|\s*[:=])*\s*\$?\s*(\d[\d,]*(?:\.\d+)?)\s*(k|thousand)?\b`)
	budgetTrailer = regexp.MustCompile(`\b(\d[\d,]*(?:\.\d+)?)\s*(k|thousand)\s+budget\b`)
)

// budgetAmount reads a budget in dollars: "$3,000", "3000 dollars", "budget 3k".
func budgetAmount(lower string) int {
	for _, re := range []*regexp.Regexp{budgetDollar, budgetWord, budgetCurr, budgetTrailer} {
		if m := re.FindStringSubmatch(lower); m != nil {
			n, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
			if err != nil {
				continue
			}
			if m[2] != "" {
				n *= 1000
			}
			if n >= 1 && n < 1e9 {
				return int(n + 0.5)
			}
		}
	}
	return 0
}

// dietOptions are the dietary needs the catering form offers, in order, with the words
// that mean each in a message.
var dietOptions = []struct {
	Value, Label string
	Words        []string
}{
	{"vegetarian", "Vegetarian", []string{"vegetarian", "veggie"}},
	{"vegan", "Vegan", []string{"vegan", "plant-based", "plant based"}},
	{"gluten-free", "Gluten-free", []string{"gluten-free", "gluten free", "coeliac", "celiac", "no gluten"}},
	{"halal", "Halal", []string{"halal"}},
	{"kosher", "Kosher", []string{"kosher"}},
	{"nut-free", "Nut-free", []string{"nut-free", "nut free", "nut allergy", "nut allergies", "peanut allergy", "no nuts"}},
	{"none", "No restrictions", []string{"no restrictions", "no dietary", "no special diet", "no allergies", "anything goes", "eat anything"}},
}

// dietIn lists the dietary needs a message names, in the order of dietOptions.
func dietIn(lower string) []string {
	var out []string
	for _, d := range dietOptions {
		for _, w := range d.Words {
			if containsWord(lower, w) {
				out = append(out, d.Value)
				break
			}
		}
	}
	if len(out) > 1 {
		out = slices.DeleteFunc(out, func(v string) bool { return v == "none" })
	}
	return out
}

// dietLabel is the label of a dietary value.
func dietLabel(value string) string {
	for _, d := range dietOptions {
		if d.Value == value {
			return d.Label
		}
	}
	return value
}
