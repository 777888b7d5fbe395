package web

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// figureSpans are the spans, in days, the figures page offers; a span it does not offer
// falls back to defaultFigureDays.
var figureSpans = []int{7, 30, 90}

const defaultFigureDays = 30

// handleFigures shows staff the question figures of the last 7, 30 or 90 days (?days=,
// 30 by default): whole UTC days, today's included; of all agents, one (?agent=), or the
// agents outside Parley that ask over its MCP server (?kind=inbound).
func (s *Server) handleFigures(c echo.Context) error {
	days, err := strconv.Atoi(c.QueryParam("days"))
	if err != nil || !slices.Contains(figureSpans, days) {
		days = defaultFigureDays
	}
	// Whole days: today's ends at midnight, so that what was asked this very moment counts.
	to := s.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -days)
	facts, err := s.review.QuestionFacts(c.Request().Context(), from, to)
	if err != nil {
		return err
	}
	// The agents to choose from are those of the span; the figures, of the one chosen.
	d := views.FiguresData{Days: days, Spans: figureSpans, Titles: map[string]string{}, Agent: c.QueryParam("agent"),
		Inbound: c.QueryParam("kind") == string(domain.KindInbound)}
	for _, f := range facts {
		if f.Inbound {
			d.HasInbound = true
			d.Titles[f.Agent] = domain.InboundTitle
		} else if _, ok := d.Titles[f.Agent]; !ok {
			d.Titles[f.Agent] = s.agentTitle(f.Agent)
			d.Agents = append(d.Agents, f.Agent)
		}
	}
	slices.Sort(d.Agents)
	switch {
	case d.Inbound:
		facts = slices.DeleteFunc(facts, func(f domain.QuestionFact) bool { return !f.Inbound })
	case d.Agent != "":
		facts = slices.DeleteFunc(facts, func(f domain.QuestionFact) bool { return f.Inbound || f.Agent != d.Agent })
	}
	d.Figures = domain.FigureQuestions(facts, from, to)
	opinions, err := s.feedback.FeedbackFacts(c.Request().Context(), from, to)
	if err != nil {
		return err
	}
	switch {
	case d.Inbound:
		opinions = slices.DeleteFunc(opinions, func(f domain.FeedbackFact) bool { return f.Agent != "" })
	case d.Agent != "":
		opinions = slices.DeleteFunc(opinions, func(f domain.FeedbackFact) bool { return f.Agent != d.Agent })
	}
	d.Feedback = domain.FigureFeedback(opinions, from, to)
	return s.page(c, http.StatusOK, views.Figures(d))
}
