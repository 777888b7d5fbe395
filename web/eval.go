package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
)

// handleExportEval downloads the conversations as JSON Lines to evaluate agents with (see
// eval), filtered as Review is: by agent, by activity since the "from" date, by label.
func (s *Server) handleExportEval(c echo.Context) error {
	q := c.QueryParams()
	f := eval.Filter{Agent: q.Get("agent"), Label: q.Get("label"), WithNotes: q.Get("notes") == "1"}
	if from := q.Get("from"); from != "" {
		t, err := time.Parse("2006-01-02", from)
		if err != nil {
			return domain.Errorf(domain.EINVALID, "From %q: a date, 2006-01-02.", from)
		}
		f.Since = t
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/x-ndjson; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="parley-eval.jsonl"`)
	h.Set(echo.HeaderCacheControl, "no-store")
	c.Response().WriteHeader(http.StatusOK)
	// Lines go out as they are written: memory stays flat, however many conversations.
	_, err := eval.Write(c.Request().Context(), c.Response(), s.eval, f, s.backendOf)
	if err != nil {
		s.log.Error("export for evaluation", "error", err)
	}
	return nil
}

// backendOf names an agent's back end.
func (s *Server) backendOf(agent string) string {
	if s.backends == nil {
		return "unknown"
	}
	return s.backends(agent)
}
