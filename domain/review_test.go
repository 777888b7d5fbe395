package domain_test

import (
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestPercentile(t *testing.T) {
	s := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Second)
		}
		return out
	}
	tests := []struct {
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{nil, 50, 0},
		{s(7), 50, 7 * time.Second},
		{s(7), 90, 7 * time.Second},
		{s(4, 1, 3, 2), 50, 2 * time.Second},
		{s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Second},
		{s(10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 100), 90, 10 * time.Second},
		{s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 50, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := domain.Percentile(tt.in, tt.p); got != tt.want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", tt.in, tt.p, got, tt.want)
		}
	}
}

func TestFigureQuestions(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := func(d, h int) time.Time { return day.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour) }
	facts := []domain.QuestionFact{
		{Agent: "planner", AskedAt: at(0, 9), Outcome: domain.Answered, ResolvedAt: at(0, 9).Add(2 * time.Minute)},
		{Agent: "planner", AskedAt: at(0, 10), Outcome: domain.Answered, ResolvedAt: at(0, 10).Add(10 * time.Minute)},
		{Agent: "planner", AskedAt: at(0, 11), Outcome: domain.Declined, ResolvedAt: at(0, 12)},
		{Agent: "engineer", AskedAt: at(2, 8), Outcome: domain.Expired, ResolvedAt: at(3, 8)},
		{Agent: "engineer", AskedAt: at(2, 9), Outcome: domain.Answered, ResolvedAt: at(2, 9).Add(time.Hour)},
		{Agent: "engineer", AskedAt: at(2, 10)},
		{Agent: "engineer", AskedAt: at(2, 11), Outcome: domain.Superseded, ResolvedAt: at(2, 12)},
		{Agent: "planner", AskedAt: at(3, 1), Outcome: domain.Answered, ResolvedAt: at(3, 2)},   // after the span
		{Agent: "planner", AskedAt: at(-1, 23), Outcome: domain.Answered, ResolvedAt: at(0, 1)}, // before it
	}
	f := domain.FigureQuestions(facts, at(0, 7), at(3, 0))
	if len(f.Days) != 3 || !f.Days[0].Day.Equal(day) || !f.Days[2].Day.Equal(at(2, 0)) {
		t.Fatalf("days: %+v", f.Days)
	}
	want := []domain.DayFigures{
		{Day: at(0, 0), Counts: domain.Counts{Asked: 3, Answered: 2, Declined: 1}},
		{Day: at(1, 0)},
		{Day: at(2, 0), Counts: domain.Counts{Asked: 4, Answered: 1, Expired: 1, Pending: 1, Other: 1}},
	}
	for i, d := range f.Days {
		if d != want[i] {
			t.Errorf("day %d: got %+v, want %+v", i, d, want[i])
		}
	}
	if len(f.Agents) != 2 || f.Agents[0].Agent != "engineer" || f.Agents[1].Agent != "planner" {
		t.Fatalf("agents: %+v", f.Agents)
	}
	if p := f.Agents[1]; p.Asked != 3 || p.Answered != 2 || p.Median != 2*time.Minute || p.P90 != 10*time.Minute {
		t.Errorf("planner: %+v", p)
	}
	if e := f.Agents[0]; e.Median != time.Hour || e.P90 != time.Hour || e.Pending != 1 {
		t.Errorf("engineer: %+v", e)
	}
	if f.Total.Asked != 7 || f.Total.Answered != 3 || f.Total.Median != 10*time.Minute || f.Total.P90 != time.Hour {
		t.Errorf("total: %+v", f.Total)
	}
}
