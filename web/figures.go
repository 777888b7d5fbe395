package web

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/views"
)

// figureSpans are the spans, in days, the figures page offers; a span it does not offer
// falls back to defaultFigureDays.
var figureSpans = []int{7, 30, 90}

const defaultFigureDays = 30

// handleFigures shows staff the question figures of the last 7, 30 or 90 days (?days=,
// 30 by default): whole UTC days, today's included.
func (s *Server) handleFigures(c echo.Context) error {
	days, err := strconv.Atoi(c.QueryParam("days"))
	if err != nil || !slices.Contains(figureSpans, days) {
		days = defaultFigureDays
	}
	// Whole days: today's ends at midnight, so that what was asked this very moment counts.
	to := s.db.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -days)
	facts, err := s.db.QuestionFacts(c.Request().Context(), from, to)
	if err != nil {
		return err
	}
	figs := agent.FigureQuestions(facts, from, to)
	titles := map[string]string{}
	for _, a := range figs.Agents {
		if info, ok := s.runner.Agent(a.Agent); ok {
			titles[a.Agent] = info.Title
		}
	}
	return page(c, http.StatusOK, views.Figures(views.FiguresData{Figures: figs, Days: days, Spans: figureSpans, Titles: titles}))
}
