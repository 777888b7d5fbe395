package domain_test

import (
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Opinions counted by day and by agent, most rated first; the median time from a bad one to
// its conversation's review counts only those reviewed after them; opinions outside the span
// are left out.
func TestFigureFeedback(t *testing.T) {
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(d, h int) time.Time { return day.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour) }
	facts := []domain.FeedbackFact{
		{Agent: "planner", Item: domain.ItemReply, Rating: domain.RatingBad, At: at(0, 9), ReviewedAt: at(0, 11)},
		{Agent: "planner", Item: domain.ItemReply, Rating: domain.RatingBad, At: at(1, 9), ReviewedAt: at(1, 13)},
		{Agent: "planner", Item: domain.ItemReply, Rating: domain.RatingGood, At: at(1, 10)},
		{Agent: "planner", Item: domain.ItemQuestion, Rating: domain.RatingUnneeded, At: at(2, 8), ReviewedAt: at(1, 20)}, // reviewed before: not counted
		{Agent: "analyst", Item: domain.ItemQuestion, Rating: domain.RatingUseful, At: at(2, 9)},
		{Agent: "analyst", Item: domain.ItemReply, Rating: domain.RatingGood, At: at(5, 9)}, // after the span
	}
	f := domain.FigureFeedback(facts, day, day.Add(3*24*time.Hour))
	if len(f.Days) != 3 || f.Days[1].Bad != 1 || f.Days[1].Good != 1 || f.Days[2].Unneeded != 1 || f.Days[2].Useful != 1 {
		t.Errorf("days = %+v", f.Days)
	}
	if len(f.Agents) != 2 || f.Agents[0].Agent != "planner" || f.Agents[0].Replies() != 3 || f.Agents[0].Bad != 2 || f.Agents[0].Questions() != 1 {
		t.Fatalf("agents = %+v", f.Agents)
	}
	if p := f.Agents[0]; p.Reviewed != 2 || p.ToReview != 2*time.Hour {
		t.Errorf("planner to review = %v of %d; want the median of 2h and 4h by nearest rank, 2h, of 2", p.ToReview, p.Reviewed)
	}
	if f.Total.Replies() != 3 || f.Total.Questions() != 2 || f.Total.Good != 1 || f.Agents[1].ToReview != 0 {
		t.Errorf("total = %+v", f.Total)
	}
}
