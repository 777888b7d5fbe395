package domain

import (
	"slices"
	"time"
)

// InboxItem is a question still waiting for an answer, with the conversation it is in.
type InboxItem struct {
	Question     QuestionRecord
	Conversation Conversation
}

// Age is how long the question has waited at now.
func (it InboxItem) Age(now time.Time) time.Duration { return now.Sub(it.Question.AskedAt) }

// SearchHit is a conversation found by a search, with its best match: what kind of text
// matched (user_message, agent_message, question_asked, answer, document), a snippet with
// the matched words between \x02 and \x03, and how many of its texts matched.
type SearchHit struct {
	Conversation Conversation
	Kind         string
	Snippet      string
	Matches      int
}

// QuestionFact is one question as the figures count it: the agent of its conversation,
// when it was asked, and how (and when) it was resolved; Outcome is empty while pending.
type QuestionFact struct {
	// Agent is the agent that asked; Inbound says an agent outside Parley asked, over its MCP
	// server (a KindInbound conversation, of no agent).
	Agent      string
	Inbound    bool
	AskedAt    time.Time
	Outcome    Outcome
	ResolvedAt time.Time
}

// QuestionFigures are the staff's figures over a span of days: questions asked and how
// they ended, per day and per agent, and how long answers took.
type QuestionFigures struct {
	From, To time.Time
	Days     []DayFigures
	Agents   []AgentFigures
	Total    AgentFigures
}

// Counts are questions asked, by how they ended (Other: cancelled or superseded).
type Counts struct {
	Asked, Answered, Declined, Expired, Other, Pending int
}

// add counts one question that ended with outcome ("" while it is pending).
func (c *Counts) add(outcome Outcome) {
	c.Asked++
	switch outcome {
	case Answered:
		c.Answered++
	case Declined:
		c.Declined++
	case Expired:
		c.Expired++
	case "":
		c.Pending++
	default:
		c.Other++
	}
}

// plus is c and d together.
func (c Counts) plus(d Counts) Counts {
	return Counts{c.Asked + d.Asked, c.Answered + d.Answered, c.Declined + d.Declined, c.Expired + d.Expired, c.Other + d.Other, c.Pending + d.Pending}
}

// DayFigures counts the questions asked on one day (UTC), by how they ended.
type DayFigures struct {
	Day time.Time
	Counts
}

// AgentFigures counts one agent's questions, and the median and 90th percentile of the time
// people took to answer them (answered questions only).
type AgentFigures struct {
	Agent string
	Counts
	Median, P90 time.Duration
}

// FigureQuestions computes the figures of the questions asked in [from, to), by day from
// from's day: every day of the span has an entry, days without questions too.
func FigureQuestions(facts []QuestionFact, from, to time.Time) QuestionFigures {
	from, to = from.UTC().Truncate(24*time.Hour), to.UTC()
	f := QuestionFigures{From: from, To: to}
	days, index := spanDays(from, to)
	for _, d := range days {
		f.Days = append(f.Days, DayFigures{Day: d})
	}
	agents := map[string]*AgentFigures{}
	waits := map[string][]time.Duration{}
	for _, q := range facts {
		if q.AskedAt.Before(from) || !q.AskedAt.Before(to) {
			continue
		}
		a := agents[q.Agent]
		if a == nil {
			a = &AgentFigures{Agent: q.Agent}
			agents[q.Agent] = a
		}
		f.Days[index[q.AskedAt.UTC().Format(time.DateOnly)]].add(q.Outcome)
		a.add(q.Outcome)
		if q.Outcome == Answered {
			w := q.ResolvedAt.Sub(q.AskedAt)
			waits[q.Agent] = append(waits[q.Agent], w)
			waits[""] = append(waits[""], w)
		}
	}
	for _, a := range agents {
		a.Median, a.P90 = Percentile(waits[a.Agent], 50), Percentile(waits[a.Agent], 90)
		f.Agents = append(f.Agents, *a)
		f.Total.Counts = f.Total.plus(a.Counts)
	}
	f.Total.Median, f.Total.P90 = Percentile(waits[""], 50), Percentile(waits[""], 90)
	slices.SortFunc(f.Agents, func(a, b AgentFigures) int {
		if a.Asked != b.Asked {
			return b.Asked - a.Asked
		}
		if a.Agent < b.Agent {
			return -1
		}
		return 1
	})
	return f
}

// Percentile is the p-th percentile of ds by the nearest-rank method (the smallest value
// with at least p% of the values at or below it); 0 for no values.
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 × n)
	return s[max(rank, 1)-1]
}
