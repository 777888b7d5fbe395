package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
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
