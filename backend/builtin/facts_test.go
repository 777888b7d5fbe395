package builtin

import (
	"slices"
	"testing"
	"time"
)

func TestGuestCount(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"plan a party for 30 people", 30},
		{"a dinner for 12", 12},
		{"thirty guests, budget $3000", 30},
		{"a 40-person offsite", 40},
		{"team of 8 engineers", 8},
		{"budget of 3000 dollars", 0},
		{"in 3 weeks for 25", 25},
		{"for 3 weeks", 0},
		{"for about 50 attendees", 50},
		{"plan a party", 0},
	}
	for _, tt := range tests {
		if got := guestCount(tt.in); got != tt.want {
			t.Errorf("guestCount(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestBudgetAmount(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"budget $3000", 3000},
		{"$3,000 total", 3000},
		{"3000 dollars", 3000},
		{"budget 3k", 3000},
		{"a budget of $2.5k", 2500},
		{"budget: 1200", 1200},
		{"5k budget", 5000},
		{"for 30 people", 0},
	}
	for _, tt := range tests {
		if got := budgetAmount(tt.in); got != tt.want {
			t.Errorf("budgetAmount(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestCityIn(t *testing.T) {
	tests := []struct {
		in, city, area string
	}{
		{"downtown Seattle, Friday", "Seattle", "downtown"},
		{"somewhere in new york please", "New York", ""},
		{"a party in Springfield on Friday", "Springfield", ""},
		{"downtown Boise", "Boise", "downtown"},
		{"a party in March", "", ""},
		{"plan a party", "", ""},
	}
	for _, tt := range tests {
		city, area := cityIn(tt.in)
		if city != tt.city || area != tt.area {
			t.Errorf("cityIn(%q) = %q, %q; want %q, %q", tt.in, city, area, tt.city, tt.area)
		}
	}
}

func TestCityAnswer(t *testing.T) {
	tests := []struct {
		in, city, area string
		ok             bool
	}{
		{"Portland", "Portland", "", true},
		{"downtown springfield", "Springfield", "downtown", true},
		{"idk", "", "", false},
		{"  ", "", "", false},
		{"??", "", "", false},
	}
	for _, tt := range tests {
		city, area, ok := cityAnswer(tt.in)
		if city != tt.city || area != tt.area || ok != tt.ok {
			t.Errorf("cityAnswer(%q) = %q, %q, %v; want %q, %q, %v", tt.in, city, area, ok, tt.city, tt.area, tt.ok)
		}
	}
}

func TestDayIn(t *testing.T) {
	tuesday := time.Date(2025, 10, 28, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		in              string
		ref             time.Time
		date, day, hint string
	}{
		{"friday evening in 3 weeks", time.Time{}, "", "Friday, in 3 weeks", ""},
		{"friday evening in 3 weeks", tuesday, "2025-11-21", "", ""},
		{"next saturday", tuesday, "2025-11-01", "", ""},
		{"next saturday", time.Time{}, "", "next Saturday", ""},
		{"on 2026-01-15", tuesday, "2026-01-15", "", ""},
		{"on december 5th", tuesday, "2025-12-05", "", ""},
		{"5 march", tuesday, "2026-03-05", "", ""},
		{"tomorrow at 9am", tuesday, "2025-10-29", "", ""},
		{"in two weeks", tuesday, "", "", "2025-11-11"},
		{"in two weeks", time.Time{}, "", "", ""},
		{"soon", tuesday, "", "", ""},
	}
	for _, tt := range tests {
		date, day, hint := dayIn(tt.in, tt.ref)
		if date != tt.date || day != tt.day || hint != tt.hint {
			t.Errorf("dayIn(%q, %v) = %q, %q, %q; want %q, %q, %q", tt.in, tt.ref.IsZero(), date, day, hint, tt.date, tt.day, tt.hint)
		}
	}
}

func TestTimeOfDay(t *testing.T) {
	tests := map[string]string{
		"friday evening": "evening", "over lunch": "afternoon", "a brunch": "morning",
		"at 7pm": "evening", "at 10am": "morning", "at 2:30 pm": "afternoon", "next week": "",
	}
	for in, want := range tests {
		if got := timeOfDay(in); got != want {
			t.Errorf("timeOfDay(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDietIn(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"vegetarian and gluten-free options required", []string{"vegetarian", "gluten-free"}},
		{"one vegan, one with a nut allergy, halal and kosher meals", []string{"vegan", "halal", "kosher", "nut-free"}},
		{"no restrictions", []string{"none"}},
		{"gluten free please, otherwise no restrictions", []string{"gluten-free"}},
		{"plan a party", nil},
	}
	for _, tt := range tests {
		if got := dietIn(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("dietIn(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestExtractFacts_Seattle(t *testing.T) {
	f := extractFacts(seattle, time.Time{})
	want := facts{Kind: "corporate team building event", Guests: 30, Budget: 3000, BudgetStated: true, City: "Seattle",
		Area: "downtown", Day: "Friday, in 3 weeks", Time: "evening", Diet: []string{"vegetarian", "gluten-free"}}
	if f.Kind != want.Kind || f.Guests != want.Guests || f.Budget != want.Budget || !f.BudgetStated || f.City != want.City ||
		f.Area != want.Area || f.Day != want.Day || f.Time != want.Time || !slices.Equal(f.Diet, want.Diet) {
		t.Errorf("extractFacts = %+v, want %+v", f, want)
	}
}

func FuzzExtractFacts(f *testing.F) {
	for _, s := range []string{seattle, "Plan a party for 30 people", "downtown Boise next friday at 7pm, $2.5k", "in a few weeks", "5 dec"} {
		f.Add(s)
	}
	ref := time.Date(2025, 10, 28, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got := extractFacts(s, ref)
		if got.Guests < 0 || got.Budget < 0 {
			t.Errorf("extractFacts(%q) = %+v", s, got)
		}
		if got.Date != "" {
			if _, err := time.Parse(time.DateOnly, got.Date); err != nil {
				t.Errorf("extractFacts(%q) date %q: %v", s, got.Date, err)
			}
		}
		cityAnswer(s)
		actionFor(s)
		for _, a := range actions {
			a.Fields(s)
		}
	})
}
