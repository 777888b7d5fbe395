package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// handleReasons shows the reasons people may tick after a bad reply or an unneeded question.
func (s *Server) handleReasons(c echo.Context) error {
	reasons, err := s.feedback.FeedbackReasons(c.Request().Context())
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, views.ReasonsPage(views.ReasonsData{Reasons: reasons, Saved: c.QueryParam("saved") == "1"}))
}

// handleSaveReasons keeps the list staff typed, one a line; a list refused comes back as
// typed, with why (422).
func (s *Server) handleSaveReasons(c echo.Context) error {
	text := c.FormValue("reasons")
	reasons, err := domain.CheckReasons(text)
	if err == nil {
		err = s.feedback.SetFeedbackReasons(c.Request().Context(), currentUser(c).Name, reasons)
	}
	if domain.ErrorCode(err) == domain.EINVALID {
		return s.page(c, http.StatusUnprocessableEntity, views.ReasonsPage(views.ReasonsData{Text: text, Error: domain.ErrorMessage(err)}))
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/review/reasons?saved=1")
}
