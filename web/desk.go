package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// Staff's notes and labels on a conversation's timeline: theirs alone.

// staffDesk reads what staff alone see of a conversation on its timeline.
func (s *Server) staffDesk(c echo.Context, convID int64) (*views.StaffDesk, error) {
	if !currentUser(c).IsStaff() {
		return nil, nil
	}
	ctx := c.Request().Context()
	var d views.StaffDesk
	var err error
	if d.Notes, err = s.desk.Notes(ctx, convID); err != nil {
		return nil, err
	}
	if d.Labels, err = s.desk.ConversationLabels(ctx, convID); err != nil {
		return nil, err
	}
	if d.AllLabels, err = s.desk.Labels(ctx); err != nil {
		return nil, err
	}
	return &d, nil
}

// handleAddNote keeps a staff member's note on the conversation; a note refused comes back
// on the timeline, as typed, with why (422).
func (s *Server) handleAddNote(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	body := strings.TrimSpace(domain.NormalizeNewlines(c.FormValue("note")))
	err = domain.NoteText.Check(body)
	if err == nil && body == "" {
		err = domain.Errorf(domain.EINVALID, "Write the note first.")
	}
	if err == nil {
		_, err = s.desk.AddNote(c.Request().Context(), conv.ID, currentUser(c).Name, body)
	}
	if domain.ErrorCode(err) == domain.EINVALID {
		d, terr := s.timeline(c)
		if terr != nil {
			return terr
		}
		d.Staff.Note, d.Staff.NoteError = c.FormValue("note"), domain.ErrorMessage(err)
		return s.page(c, http.StatusUnprocessableEntity, views.TimelinePage(d))
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/c/%d/timeline#notes", conv.ID))
}

// handleLabel puts a label on the conversation (on=1) or takes it off.
func (s *Server) handleLabel(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	if err := s.desk.LabelConversation(c.Request().Context(), conv.ID, c.FormValue("label"), c.FormValue("on") == "1", currentUser(c).Name); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/c/%d/timeline#notes", conv.ID))
}
