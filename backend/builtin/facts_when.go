package builtin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	isoDate    = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})\b`)
	weekdayRe  = regexp.MustCompile(`\b(next|this|on|coming)?\s*(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	relativeRe = regexp.MustCompile(`\bin\s+(\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|a couple of|a few)\s+(day|week|month)s?\b`)
	monthDayRe = regexp.MustCompile(`\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b|\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b`)
	clockRe    = regexp.MustCompile(`\b(\d{1,2})(?::\d{2})?\s*(am|pm)\b`)
	smallNums  = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
		"six": 6, "seven": 7, "eight": 8, "a couple of": 2, "a few": 3}
	weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
		"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}
	months = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7,
		"aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}
)

// dayIn reads the day of the event. date is an ISO date when the day can be resolved
// against ref; day is the specific day as said when it cannot ("Friday, in 3 weeks");
// hint is a resolved vague date ("in 3 weeks" alone), to prefill the date field.
func dayIn(lower string, ref time.Time) (date, day, hint string) {
	if m := isoDate.FindString(lower); m != "" {
		if _, err := time.Parse(time.DateOnly, m); err == nil {
			return m, "", ""
		}
	}
	known := !ref.IsZero()
	base := ref
	rel := relativeRe.FindStringSubmatch(lower)
	if rel != nil {
		n, err := strconv.Atoi(rel[1])
		if err != nil {
			n = smallNums[rel[1]]
		}
		switch rel[2] {
		case "day":
			base = base.AddDate(0, 0, n)
		case "week":
			base = base.AddDate(0, 0, 7*n)
		default:
			base = base.AddDate(0, n, 0)
		}
	}
	if m := monthDayRe.FindStringSubmatch(lower); m != nil {
		mon, dd := m[1], m[2]
		if mon == "" {
			mon, dd = m[4], m[3]
		}
		d, _ := strconv.Atoi(dd)
		if d >= 1 && d <= 31 {
			if !known {
				return "", fmt.Sprintf("%s %d", time.Month(months[mon]), d), ""
			}
			t := time.Date(ref.Year(), months[mon], d, 0, 0, 0, 0, time.UTC)
			if t.Before(dateOnly(ref)) {
				t = t.AddDate(1, 0, 0)
			}
			return t.Format(time.DateOnly), "", ""
		}
	}
	if m := weekdayRe.FindStringSubmatch(lower); m != nil {
		wd := weekdays[m[2]]
		said := strings.ToUpper(m[2][:1]) + m[2][1:]
		if m[1] == "next" && rel == nil {
			said = "next " + said
		}
		if rel != nil {
			said += ", " + rel[0]
		}
		if !known {
			return "", said, ""
		}
		var t time.Time
		if rel != nil {
			t = weekdayInWeekOf(dateOnly(base), wd)
		} else {
			t = nextWeekday(dateOnly(ref), wd)
		}
		return t.Format(time.DateOnly), "", ""
	}
	switch {
	case containsWord(lower, "tomorrow"):
		if !known {
			return "", "tomorrow", ""
		}
		return dateOnly(ref).AddDate(0, 0, 1).Format(time.DateOnly), "", ""
	case containsWord(lower, "today") || containsWord(lower, "tonight"):
		if !known {
			return "", "today", ""
		}
		return dateOnly(ref).Format(time.DateOnly), "", ""
	case rel != nil && known:
		return "", "", dateOnly(base).Format(time.DateOnly)
	}
	return "", "", ""
}

// dateOnly is the calendar day of t, as midnight UTC.
func dateOnly(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// nextWeekday is the first wd strictly after t.
func nextWeekday(t time.Time, wd time.Weekday) time.Time {
	d := (int(wd) - int(t.Weekday()) + 7) % 7
	if d == 0 {
		d = 7
	}
	return t.AddDate(0, 0, d)
}

// weekdayInWeekOf is wd in the Monday-to-Sunday week that holds t.
func weekdayInWeekOf(t time.Time, wd time.Weekday) time.Time {
	monday := t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
	return monday.AddDate(0, 0, (int(wd)+6)%7)
}

// timeOfDay reads morning, afternoon or evening from a message.
func timeOfDay(lower string) string {
	switch {
	case containsWord(lower, "evening") || containsWord(lower, "tonight") || containsWord(lower, "night") ||
		containsWord(lower, "after work") || containsWord(lower, "dinner"):
		return "evening"
	case containsWord(lower, "afternoon") || containsWord(lower, "lunch") || containsWord(lower, "lunchtime") ||
		containsWord(lower, "noon"):
		return "afternoon"
	case containsWord(lower, "morning") || containsWord(lower, "breakfast") || containsWord(lower, "brunch"):
		return "morning"
	}
	if m := clockRe.FindStringSubmatch(lower); m != nil {
		h, _ := strconv.Atoi(m[1])
		if m[2] == "pm" && h < 12 {
			h += 12
		}
		switch {
		case h < 12:
			return "morning"
		case h < 17:
			return "afternoon"
		default:
			return "evening"
		}
	}
	return ""
}

// formatDay is a date as people read it: "Friday 21 November 2025".
func formatDay(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.Format("Monday 2 January 2006")
}
