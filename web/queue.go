package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
	"github.com/parley-chat/parley/views"
)

// handleQueue is Review's "Needs review": the conversations something went wrong in since
// staff last marked them reviewed, filtered by agent, trouble and assignee.
func (s *Server) handleQueue(c echo.Context) error {
	ctx := c.Request().Context()
	f := queueFilter(c.QueryParams())
	items, err := s.queue.NeedsReview(ctx, f)
	if err != nil {
		return err
	}
	users, err := s.review.Users(ctx)
	if err != nil {
		return err
	}
	d := views.QueueData{Items: items, Filter: f, Query: queueQuery(f).Encode()}
	for _, u := range users {
		if u.IsStaff() {
			d.Staff = append(d.Staff, u)
		}
	}
	if d.Labels, err = s.desk.Labels(ctx); err != nil {
		return err
	}
	for _, a := range s.runner.Agents() {
		d.Agents = append(d.Agents, a.Name)
	}
	slices.Sort(d.Agents)
	return s.page(c, http.StatusOK, views.QueuePage(d))
}

// queueFilter reads the queue's filters from a query.
func queueFilter(q url.Values) domain.QueueFilter {
	f := domain.QueueFilter{Agent: q.Get("agent"), Trouble: domain.Trouble(q.Get("trouble")), Label: q.Get("label"), Limit: 200}
	f.Assignee, _ = strconv.ParseInt(q.Get("assignee"), 10, 64)
	return f
}

// queueQuery is the filters as a query, for the page's forms to come back to.
func queueQuery(f domain.QueueFilter) url.Values {
	q := url.Values{}
	if f.Agent != "" {
		q.Set("agent", f.Agent)
	}
	if f.Trouble != "" {
		q.Set("trouble", string(f.Trouble))
	}
	if f.Label != "" {
		q.Set("label", f.Label)
	}
	if f.Assignee != 0 {
		q.Set("assignee", strconv.FormatInt(f.Assignee, 10))
	}
	return q
}

// handleMarkReviewed takes a conversation out of the queue until new trouble, and goes back
// to the queue as it was filtered.
func (s *Server) handleMarkReviewed(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	if err := s.queue.MarkReviewed(c.Request().Context(), conv.ID, currentUser(c).Name); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/review/queue?"+queueQuery(queueFilter(c.QueryParams())).Encode())
}

// handleAssign gives a conversation of the queue to a staff member (0: no one).
func (s *Server) handleAssign(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	assignee, err := strconv.ParseInt(c.FormValue("assignee"), 10, 64)
	if err != nil {
		return domain.Errorf(domain.EINVALID, "Choose whom to assign it to.")
	}
	if err := s.queue.Assign(c.Request().Context(), conv.ID, assignee, currentUser(c).Name); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/review/queue?"+queueQuery(queueFilter(c.QueryParams())).Encode())
}

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
