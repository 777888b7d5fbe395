package builtin

import (
	"fmt"
	"slices"
	"strings"
)

// dish is one item of a menu, with the dietary labels it carries.
type dish struct {
	Name string
	Tags []string // V, VG, GF, NF
}

// menus are the base menus by time of day; the catering specialist adapts them.
var menus = map[string][]dish{
	"morning": {
		{"Overnight oats with berries", []string{"V", "NF"}},
		{"Scrambled eggs with chives and roast tomatoes", []string{"V", "GF", "NF"}},
		{"Smoked salmon bagels", []string{"NF"}},
		{"Coconut yoghurt, fruit and seed pots", []string{"V", "VG", "GF", "NF"}},
		{"Pastries from a local bakery", []string{"V"}},
	},
	"afternoon": {
		{"Grilled chicken and pesto wraps", []string{}},
		{"Falafel bowls with hummus and tabbouleh", []string{"V", "VG", "NF"}},
		{"Caprese salad with basil", []string{"V", "GF", "NF"}},
		{"Roast sweet potato and black bean salad", []string{"V", "VG", "GF", "NF"}},
		{"Lemon drizzle traybake", []string{"V", "NF"}},
	},
	"evening": {
		{"Roasted vegetable and halloumi skewers", []string{"V", "GF", "NF"}},
		{"Herb-crusted salmon with lemon butter", []string{"GF", "NF"}},
		{"Grilled chicken with chimichurri", []string{"GF", "NF"}},
		{"Chickpea and spinach curry with rice", []string{"V", "VG", "GF", "NF"}},
		{"Focaccia and sourdough with olive oil", []string{"V", "VG", "NF"}},
		{"Dark chocolate mousse", []string{"V", "GF", "NF"}},
	},
}

// menuFor is the menu for the event as Markdown bullet lines, covering its dietary needs.
func menuFor(f facts) []string {
	when := f.Time
	if menus[when] == nil {
		when = "evening"
	}
	need := map[string]bool{}
	for _, d := range f.Diet {
		need[d] = true
	}
	var lines []string
	for _, d := range menus[when] {
		name := d.Name
		if need["halal"] && strings.Contains(name, "chicken") {
			name = strings.Replace(name, "chicken", "halal-certified chicken", 1)
		}
		tags := d.Tags
		if need["nut-free"] && !slices.Contains(tags, "NF") {
			name += ", made without nuts"
			tags = append(slices.Clone(tags), "NF")
		}
		lines = append(lines, dishLine(name, tags))
	}
	if need["gluten-free"] {
		lines = append(lines, dishLine("Gluten-free bread and crackers, served separately", []string{"V", "VG", "GF", "NF"}))
	}
	if need["vegan"] {
		lines = append(lines, dishLine("Coconut and mango chia pudding", []string{"V", "VG", "GF", "NF"}))
	}
	if need["kosher"] {
		lines = append(lines, "- Sealed kosher-certified meals from a certified kitchen for the guests who keep kosher")
	}
	if need["halal"] {
		lines = append(lines, "- All meat halal-certified; no pork or alcohol used in cooking")
	}
	if need["nut-free"] {
		lines = append(lines, "- The whole menu is prepared nut-free; the caterer confirms this in writing")
	}
	return lines
}

func dishLine(name string, tags []string) string {
	if len(tags) == 0 {
		return "- " + name
	}
	return fmt.Sprintf("- %s _(%s)_", name, strings.Join(tags, ", "))
}

// dietSummary names the dietary needs in a sentence: "vegetarian and gluten-free".
func dietSummary(diet []string) string {
	if len(diet) == 0 || len(diet) == 1 && diet[0] == "none" {
		return "no dietary restrictions"
	}
	names := make([]string, 0, len(diet))
	for _, d := range diet {
		names = append(names, strings.ToLower(dietLabel(d)))
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// timelines are the run of the day by time of day.
var timelines = map[string][][2]string{
	"morning": {
		{"08:00", "Venue access, setup and AV check"}, {"08:45", "Walk-through with the venue and the caterer"},
		{"09:00", "Guests arrive; breakfast is served"}, {"09:30", "Welcome and main activity"},
		{"11:00", "Coffee break"}, {"12:00", "Wrap-up and thanks"}, {"12:30", "Teardown; venue handed back"},
	},
	"afternoon": {
		{"12:00", "Venue access, setup and AV check"}, {"12:45", "Walk-through with the venue and the caterer"},
		{"13:00", "Guests arrive; lunch is served"}, {"14:00", "Welcome and main activity"},
		{"16:00", "Coffee and cake"}, {"17:00", "Wrap-up and thanks"}, {"17:30", "Teardown; venue handed back"},
	},
	"evening": {
		{"16:30", "Venue access, setup and AV check"}, {"17:30", "Walk-through with the venue and the caterer"},
		{"18:00", "Guests arrive; welcome drinks"}, {"18:30", "Welcome and main activity"},
		{"19:30", "Dinner is served"}, {"21:00", "Closing words"}, {"21:30", "Teardown; venue handed back"},
	},
}

// timelineTable is the run of the day as a Markdown table.
func timelineTable(timeOfDay string) string {
	rows := timelines[timeOfDay]
	if rows == nil {
		rows = timelines["evening"]
	}
	var b strings.Builder
	b.WriteString("| Time | What |\n| --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}
	return b.String()
}

// checklist is what to do before the day.
var checklist = []string{
	"Now: hold the venue and confirm the deposit terms",
	"Two weeks before: confirm the menu and dietary counts with the caterer",
	"One week before: send the final head count to venue and caterer",
	"Two days before: share the address, schedule and accessibility details with guests",
}
