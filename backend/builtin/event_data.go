package builtin

import (
	"fmt"
	"math"
	"strings"
)

// venue is one of the illustrative venues the venue specialist offers. Custom venues are
// the person's own, named in the "other" field; their capacity and price are unknown.
type venue struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Capacity int     `json:"capacity,omitempty"`
	Price    int     `json:"price,omitempty"`
	Location string  `json:"location,omitempty"`
	Rating   float64 `json:"rating,omitempty"`
	Blurb    string  `json:"blurb,omitempty"`
	Custom   bool    `json:"custom,omitempty"`
}

// venueKinds shape the three venues offered in every city: cheap and large, balanced, premium.
var venueKinds = [3]struct {
	Suffix   string
	PerGuest float64
	Extra    int
	Rating   float64
	Blurb    string
}{
	{"Loft", 30, 10, 4.7, "open-plan loft with a projector, sound system and flexible seating"},
	{"Hall", 42, -1, 4.5, "classic event hall with a small stage and a caterer's kitchen"},
	{"Rooftop Garden", 22, 20, 4.3, "rooftop garden with a covered terrace and heaters"},
}

// venuesFor returns the three venues of the event's city, sized for its head count.
func venuesFor(f facts) []venue {
	c := cityNamed(f.City)
	guests := max(f.Guests, 1)
	out := make([]venue, 0, len(venueKinds))
	for i, k := range venueKinds {
		capacity := guests + k.Extra
		if k.Extra < 0 {
			capacity = guests * 2
		}
		location := c.Areas[i] + ", " + c.Name
		if i == 0 && f.Area == "downtown" {
			location = "Downtown " + c.Name + " (" + c.Areas[i] + ")"
		}
		name := c.Areas[i] + " " + k.Suffix
		out = append(out, venue{
			ID:       slug(name),
			Name:     name,
			Capacity: roundUp(capacity, 10),
			Price:    roundUp(int(math.Ceil(k.PerGuest*float64(guests)*c.Tier)), 50),
			Location: location,
			Rating:   k.Rating,
			Blurb:    k.Blurb,
		})
	}
	return out
}

// bestVenue is the best-rated venue whose price fits the venue share of the budget; the
// cheapest when none fits; the best-rated when the budget is not known.
func bestVenue(vs []venue, budget int) venue {
	share := budget * splits[0].Pct[0] / 100
	best, cheapest := -1, 0
	for i, v := range vs {
		if v.Price < vs[cheapest].Price {
			cheapest = i
		}
		if (budget == 0 || v.Price <= share) && (best < 0 || v.Rating > vs[best].Rating) {
			best = i
		}
	}
	if best < 0 {
		return vs[cheapest]
	}
	return vs[best]
}

// details is a venue's one-line summary, for option labels and tables.
func (v venue) details() string {
	if v.Custom {
		return "your own choice"
	}
	return fmt.Sprintf("up to %d guests · %s · %s · rated %.1f", v.Capacity, money(v.Price), v.Location, v.Rating)
}

func roundUp(n, step int) int { return (n + step - 1) / step * step }

// slug makes an option value from a name: "Pioneer Square Loft" -> "pioneer-square-loft".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// money formats whole dollars with thousands separators: 3000 -> "$3,000".
func money(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return "$" + s
}

// minPerGuest is the least budget per guest the planner can build an event on.
const minPerGuest = 25

// maxBudget is the largest budget the budget field takes (and the planner plans with).
const maxBudget = 10_000_000

// leastBudget is the least budget that covers guests: the budget field's minimum, and what
// the planner asks again for when a message states less.
func leastBudget(guests int) int { return roundUp(guests*minPerGuest, 100) }

// split is a way of dividing the budget, in percent of venue, catering, entertainment and
// contingency.
type split struct {
	Name string
	Pct  [4]int
}

// splits are the budget splits the budget specialist proposes, the usual one first.
var splits = []split{
	{"balanced", [4]int{40, 35, 15, 10}},
	{"food-first", [4]int{30, 45, 10, 15}},
}

var splitLines = [4]string{"Venue", "Catering", "Entertainment and activities", "Contingency"}

// amounts divides budget by s; the contingency absorbs the rounding.
func (s split) amounts(budget int) [4]int {
	var out [4]int
	rest := budget
	for i := range 3 {
		out[i] = budget * s.Pct[i] / 100
		rest -= out[i]
	}
	out[3] = rest
	return out
}

// table is the split of budget as a Markdown table.
func (s split) table(budget int) string {
	var b strings.Builder
	b.WriteString("| Item | Share | Amount |\n| --- | ---: | ---: |\n")
	for i, a := range s.amounts(budget) {
		fmt.Fprintf(&b, "| %s | %d%% | %s |\n", splitLines[i], s.Pct[i], money(a))
	}
	fmt.Fprintf(&b, "| **Total** | 100%% | **%s** |\n", money(budget))
	return b.String()
}
