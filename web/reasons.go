package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// A list staff keep, one item a line, on a page of its own: the reasons people may tick after
// a bad reply or an unneeded question, the labels staff put on conversations.
type staffList struct {
	page  views.ListData
	read  func(ctx context.Context) ([]string, error)
	check func(text string) ([]string, error)
	save  func(ctx context.Context, actor string, items []string) error
}

func (s *Server) reasonsList() staffList {
	return staffList{
		page: views.ListData{Title: "Feedback reasons", Action: "/review/reasons", Field: "Reasons, one a line", Button: "Save reasons",
			Intro: "After “Bad reply” or “Unneeded question”, people may tick these to say what was wrong. One a line, in the order shown; opinions already given keep the reasons they were given with."},
		read: s.feedback.FeedbackReasons, check: domain.CheckReasons, save: s.feedback.SetFeedbackReasons,
	}
}

func (s *Server) labelsList() staffList {
	return staffList{
		page: views.ListData{Title: "Labels", Action: "/review/labels", Field: "Labels, one a line", Button: "Save labels",
			Intro: "Staff put these on conversations from their timelines, and filter Needs review by them; the person never sees them. A label taken off the list comes off every conversation."},
		read: s.desk.Labels, check: domain.CheckLabels, save: s.desk.SetLabels,
	}
}

func (s *Server) handleReasons(c echo.Context) error     { return s.showList(c, s.reasonsList()) }
func (s *Server) handleSaveReasons(c echo.Context) error { return s.saveList(c, s.reasonsList()) }
func (s *Server) handleLabels(c echo.Context) error      { return s.showList(c, s.labelsList()) }
func (s *Server) handleSaveLabels(c echo.Context) error  { return s.saveList(c, s.labelsList()) }

// showList shows a list's page.
func (s *Server) showList(c echo.Context, l staffList) error {
	items, err := l.read(c.Request().Context())
	if err != nil {
		return err
	}
	d := l.page
	d.Items, d.Saved = items, c.QueryParam("saved") == "1"
	return s.page(c, http.StatusOK, views.ListPage(d))
}

// saveList keeps the list staff typed, one a line; a list refused comes back as typed, with
// why (422).
func (s *Server) saveList(c echo.Context, l staffList) error {
	text := c.FormValue("items")
	items, err := l.check(text)
	if err == nil {
		err = l.save(c.Request().Context(), currentUser(c).Name, items)
	}
	if domain.ErrorCode(err) == domain.EINVALID {
		d := l.page
		d.Text, d.Error = text, domain.ErrorMessage(err)
		return s.page(c, http.StatusUnprocessableEntity, views.ListPage(d))
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, l.page.Action+"?saved=1")
}
