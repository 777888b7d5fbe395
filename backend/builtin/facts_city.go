package builtin

import (
	"regexp"
	"strings"
	"unicode"
)

// city is a place the planner knows: its price level and three neighbourhoods to put the
// illustrative venues in.
type city struct {
	Name  string
	Tier  float64
	Areas [3]string
}

// cities are the places the planner recognises by name in a message.
var cities = []city{
	{"San Francisco", 1.4, [3]string{"SoMa", "Mission", "North Beach"}},
	{"Los Angeles", 1.2, [3]string{"Arts District", "Silver Lake", "Santa Monica"}},
	{"New York", 1.5, [3]string{"Chelsea", "Williamsburg", "Tribeca"}},
	{"Seattle", 1.1, [3]string{"Pioneer Square", "South Lake Union", "Capitol Hill"}},
	{"Portland", 0.9, [3]string{"Pearl District", "Alberta Arts", "Hawthorne"}},
	{"Chicago", 1.0, [3]string{"River North", "West Loop", "Wicker Park"}},
	{"Boston", 1.2, [3]string{"Back Bay", "Seaport", "Fort Point"}},
	{"Austin", 0.9, [3]string{"East Austin", "South Congress", "Rainey Street"}},
	{"Denver", 0.9, [3]string{"LoDo", "RiNo", "Highlands"}},
	{"London", 1.4, [3]string{"Shoreditch", "Southbank", "Clerkenwell"}},
	{"Berlin", 0.9, [3]string{"Kreuzberg", "Mitte", "Friedrichshain"}},
	{"Paris", 1.3, [3]string{"Le Marais", "Canal Saint-Martin", "Montmartre"}},
	{"Amsterdam", 1.1, [3]string{"Jordaan", "De Pijp", "Oost"}},
	{"Toronto", 1.0, [3]string{"Distillery District", "Liberty Village", "Yorkville"}},
	{"Vancouver", 1.1, [3]string{"Gastown", "Yaletown", "Kitsilano"}},
	{"Sydney", 1.2, [3]string{"Surry Hills", "The Rocks", "Barangaroo"}},
}

// genericCity is used for a place the planner does not know.
var genericCity = city{Tier: 1.0, Areas: [3]string{"Old Town", "Riverside", "Market District"}}

// cityNamed returns the known city called name, or genericCity under that name.
func cityNamed(name string) city {
	for _, c := range cities {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	c := genericCity
	c.Name = name
	return c
}

var (
	downtownCity = regexp.MustCompile(`\b[Dd]owntown\s+([A-Z][A-Za-z'-]+(?:\s+[A-Z][A-Za-z'-]+)?)`)
	inCity       = regexp.MustCompile(`\b(?:in|near|around)\s+([A-Z][A-Za-z'-]+(?:\s+[A-Z][A-Za-z'-]+)?)`)
	notCities    = map[string]bool{
		"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
		"saturday": true, "sunday": true, "january": true, "february": true, "march": true,
		"april": true, "may": true, "june": true, "july": true, "august": true, "september": true,
		"october": true, "november": true, "december": true, "the": true, "a": true, "an": true,
	}
)

// cityIn finds the city of a message, and "downtown" when it says so.
func cityIn(text string) (name, area string) {
	lower := strings.ToLower(text)
	if containsWord(lower, "downtown") || containsWord(lower, "city centre") || containsWord(lower, "city center") {
		area = "downtown"
	}
	for _, c := range cities {
		if containsWord(lower, strings.ToLower(c.Name)) {
			return c.Name, area
		}
	}
	for _, re := range []*regexp.Regexp{downtownCity, inCity} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			words := strings.Fields(m[1])
			if notCities[strings.ToLower(words[0])] {
				continue
			}
			if len(words) > 1 && notCities[strings.ToLower(words[1])] {
				words = words[:1]
			}
			return strings.Join(words, " "), area
		}
	}
	return "", ""
}

// cityAnswer reads the city typed into a form: a known or "downtown X" city, or else the
// text itself when it reads like a place name. ok is false for an empty or unusable answer.
func cityAnswer(text string) (name, area string, ok bool) {
	text = strings.TrimSpace(text)
	if name, area = cityIn(text); name != "" {
		return name, area, true
	}
	lower := strings.ToLower(text)
	for _, w := range []string{"downtown ", "central ", "the city of "} {
		if strings.HasPrefix(lower, w) {
			area, text = strings.TrimSpace(w), strings.TrimSpace(text[len(w):])
			if area != "downtown" {
				area = ""
			}
			break
		}
	}
	letters := 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters < 2 || len(text) > 60 || vague(text) {
		return "", "", false
	}
	words := strings.Fields(text)
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " "), area, true
}

// vague reports whether an answer says nothing usable: "idk", "not sure", "whatever".
func vague(text string) bool {
	t := strings.Trim(strings.ToLower(strings.TrimSpace(text)), ".!?")
	switch t {
	case "", "idk", "?", "-", "n/a", "na", "none", "no", "nope", "nothing", "anything", "whatever",
		"not sure", "unsure", "don't know", "dont know", "i don't know", "no idea", "other",
		"something else", "neither", "none of them", "none of these", "dunno", "any", "anywhere":
		return true
	}
	return false
}
