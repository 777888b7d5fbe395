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
	"github.com/parley-chat/parley/views"
)

// inboxLimit bounds the inbox page.
const inboxLimit = 200

// reviewPage is how many conversations the desk lists at once.
const reviewPage = 50

// handleInbox lists the questions waiting: the person's own, or everyone's for staff.
func (s *Server) handleInbox(c echo.Context) error {
	u := currentUser(c)
	owner := u.ID
	if u.IsStaff() {
		owner = 0
	}
	items, err := s.questions.Inbox(c.Request().Context(), owner, inboxLimit)
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, views.InboxPage(views.InboxData{Items: items, Now: s.now(), Agents: s.runner.Agents(), Everyone: u.IsStaff()}))
}

// handleReview is the staff desk: every conversation by state, agent, person and date, or
// those a full-text search finds.
func (s *Server) handleReview(c echo.Context) error {
	ctx := c.Request().Context()
	q := c.QueryParams()
	d := views.ReviewData{Query: strings.TrimSpace(q.Get("q")), State: q.Get("state"), Agent: q.Get("agent"), User: q.Get("user"),
		From: q.Get("from"), To: q.Get("to"), Agents: s.runner.Agents()}
	users, err := s.review.Users(ctx)
	if err != nil {
		return err
	}
	d.Users = users
	f, err := s.reviewFilter(c, q)
	if err != nil {
		d.Error = domain.ErrorMessage(err)
		return s.page(c, http.StatusUnprocessableEntity, views.ReviewPage(d))
	}
	if d.Query != "" {
		d.Searched = true
		d.Hits, d.Common, err = s.review.Search(ctx, d.Query, f)
	} else {
		d.List, d.More, err = s.ledger.ListConversations(ctx, f)
		if d.More {
			next := url.Values{}
			for k, v := range q {
				next[k] = v
			}
			next.Set("page", strconv.Itoa(f.Offset/reviewPage+2))
			d.NextPage = "/review?" + next.Encode()
		}
	}
	if err != nil {
		return err
	}
	if d.Query == "" && len(q) == 0 {
		d.Deletions, err = s.review.Deletions(ctx, 20)
		if err != nil {
			return err
		}
	}
	return s.page(c, http.StatusOK, views.ReviewPage(d))
}

// reviewFilter reads the desk's filters; a filter that makes no sense is an EINVALID error.
func (s *Server) reviewFilter(c echo.Context, q url.Values) (domain.ConversationFilter, error) {
	f := domain.ConversationFilter{Limit: reviewPage, Agent: q.Get("agent")}
	if st := domain.RunState(q.Get("state")); st != "" {
		if !slices.Contains(domain.RunStates, st) {
			return f, domain.Errorf(domain.EINVALID, "%q is not a state.", st)
		}
		f.State = st
	}
	if name := q.Get("user"); name != "" {
		u, _, err := s.accounts.UserByName(c.Request().Context(), name)
		if err != nil {
			return f, domain.Errorf(domain.EINVALID, "Nobody is called %q.", name)
		}
		f.UserID = u.ID
	}
	day := func(key string) (time.Time, error) {
		v := q.Get(key)
		if v == "" {
			return time.Time{}, nil
		}
		t, err := time.ParseInLocation(time.DateOnly, v, time.Local)
		if err != nil {
			return t, domain.Errorf(domain.EINVALID, "%q is not a date (YYYY-MM-DD).", v)
		}
		return t, nil
	}
	var err error
	if f.From, err = day("from"); err != nil {
		return f, err
	}
	if f.To, err = day("to"); err != nil {
		return f, err
	}
	if !f.To.IsZero() {
		f.To = f.To.AddDate(0, 0, 1) // the whole of the last day
	}
	if p, _ := strconv.Atoi(q.Get("page")); p > 1 {
		f.Offset = (p - 1) * reviewPage
	}
	return f, nil
}

// handleTimeline shows a conversation's every event, for its owner and for staff.
func (s *Server) handleTimeline(c echo.Context) error {
	d, err := s.timeline(c)
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, views.TimelinePage(d))
}

// timeline reads a conversation the person may read, as its timeline.
func (s *Server) timeline(c echo.Context) (views.TimelineData, error) {
	r, err := s.conversationRecord(c)
	if err != nil {
		return views.TimelineData{}, err
	}
	desk, err := s.staffDesk(c, r.conv.ID)
	if err != nil {
		return views.TimelineData{}, err
	}
	return views.TimelineData{Conversation: r.conv, AgentTitle: s.conversationAgent(r.conv), Entries: views.BuildTimeline(r.events, r.audit, r.feedback...),
		Version: r.version, Versions: r.versions, Staff: desk}, nil
}

// record is a conversation as its timeline and exports show it: the events of one of its
// versions (the one it shows, or ?version=N), its versions and its audit entries.
type record struct {
	conv     domain.Conversation
	events   []domain.Event
	audit    []domain.AuditEntry
	feedback []domain.Feedback
	version  int64
	versions domain.Versions
}

// conversationRecord reads the record of a conversation the person may read.
func (s *Server) conversationRecord(c echo.Context) (record, error) {
	var r record
	var err error
	if r.conv, err = s.readableConversation(c); err != nil {
		return r, err
	}
	ctx := c.Request().Context()
	if r.version, err = versionParam(c); err != nil {
		return r, err
	}
	if r.versions, _, err = s.ledger.Versions(ctx, r.conv.ID); err != nil {
		return r, err
	}
	if r.version < 0 {
		r.version = r.conv.Version
	}
	if _, ok := r.versions.Find(r.version); !ok {
		return r, domain.NoVersion(r.conv.ID, r.version)
	}
	if r.events, err = s.ledger.PathEvents(ctx, r.conv.ID, r.versions.Path(r.version), 0); err != nil {
		return r, err
	}
	if r.audit, err = s.review.AuditLog(ctx, r.conv.ID, 1000); err != nil {
		return r, err
	}
	if !currentUser(c).IsStaff() {
		// What staff keep of it (notes, labels, the review queue's marks) is theirs alone.
		r.audit = slices.DeleteFunc(r.audit, func(a domain.AuditEntry) bool { return staffOnly[a.Action] })
	}
	r.feedback, err = s.feedback.Feedback(ctx, r.conv.ID, 0)
	return r, err
}

// staffOnly are the audit log's actions that only staff see: what they keep of conversations.
var staffOnly = map[string]bool{"note": true, "label": true, "unlabel": true, "assign": true, "mark-reviewed": true}

// exportName is the file name of a conversation's export.
func exportName(conv domain.Conversation, ext string) string {
	return fmt.Sprintf("parley-conversation-%d.%s", conv.ID, ext)
}
