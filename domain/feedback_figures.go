package domain

import (
	"slices"
	"time"
)

// FeedbackFact is one opinion, for the figures: the agent whose reply or question it is of,
// when it was given, and when staff marked its conversation reviewed after it (zero if not).
type FeedbackFact struct {
	Agent      string
	Item       FeedbackItem
	Rating     Rating
	At         time.Time
	ReviewedAt time.Time
}

// RatingCounts count opinions by rating.
type RatingCounts struct {
	Good, Bad, Useful, Unneeded int
}

func (c *RatingCounts) add(r Rating) {
	switch r {
	case RatingGood:
		c.Good++
	case RatingBad:
		c.Bad++
	case RatingUseful:
		c.Useful++
	case RatingUnneeded:
		c.Unneeded++
	}
}

// Replies and Questions are how many replies and questions were rated.
func (c RatingCounts) Replies() int   { return c.Good + c.Bad }
func (c RatingCounts) Questions() int { return c.Useful + c.Unneeded }

// FeedbackDay counts the opinions given on one day (UTC).
type FeedbackDay struct {
	Day time.Time
	RatingCounts
}

// FeedbackAgent counts one agent's opinions, with the median time from a bad reply or an
// unneeded question to its conversation's review (of those reviewed since).
type FeedbackAgent struct {
	Agent string
	RatingCounts
	ToReview time.Duration
	Reviewed int
}

// FeedbackFigures are the figures of the opinions given in a span: by day, by agent, in all.
type FeedbackFigures struct {
	Days   []FeedbackDay
	Agents []FeedbackAgent
	Total  FeedbackAgent
}

// FigureFeedback computes the figures of the opinions given in [from, to), by day from
// from's day (every day of the span has an entry) and by agent, most rated first.
func FigureFeedback(facts []FeedbackFact, from, to time.Time) FeedbackFigures {
	from, to = from.UTC().Truncate(24*time.Hour), to.UTC()
	var f FeedbackFigures
	days, index := spanDays(from, to)
	for _, d := range days {
		f.Days = append(f.Days, FeedbackDay{Day: d})
	}
	agents := map[string]*FeedbackAgent{}
	waits := map[string][]time.Duration{}
	for _, x := range facts {
		if x.At.Before(from) || !x.At.Before(to) {
			continue
		}
		a := agents[x.Agent]
		if a == nil {
			a = &FeedbackAgent{Agent: x.Agent}
			agents[x.Agent] = a
		}
		f.Days[index[x.At.UTC().Format(time.DateOnly)]].add(x.Rating)
		a.add(x.Rating)
		if x.Rating.Negative() && x.ReviewedAt.After(x.At) {
			w := x.ReviewedAt.Sub(x.At)
			waits[x.Agent] = append(waits[x.Agent], w)
			waits[""] = append(waits[""], w)
		}
	}
	for _, a := range agents {
		a.ToReview, a.Reviewed = Percentile(waits[a.Agent], 50), len(waits[a.Agent])
		f.Agents = append(f.Agents, *a)
		t := &f.Total.RatingCounts
		t.Good, t.Bad, t.Useful, t.Unneeded = t.Good+a.Good, t.Bad+a.Bad, t.Useful+a.Useful, t.Unneeded+a.Unneeded
	}
	f.Total.ToReview, f.Total.Reviewed = Percentile(waits[""], 50), len(waits[""])
	slices.SortFunc(f.Agents, func(a, b FeedbackAgent) int {
		na, nb := a.Replies()+a.Questions(), b.Replies()+b.Questions()
		if na != nb {
			return nb - na
		}
		if a.Agent < b.Agent {
			return -1
		}
		return 1
	})
	return f
}

// spanDays are the days (UTC) of [from, to), from's day first, and each day's place among
// them by its date.
func spanDays(from, to time.Time) ([]time.Time, map[string]int) {
	var days []time.Time
	index := map[string]int{}
	for d := from.UTC().Truncate(24 * time.Hour); d.Before(to); d = d.Add(24 * time.Hour) {
		index[d.Format(time.DateOnly)] = len(days)
		days = append(days, d)
	}
	return days, index
}
