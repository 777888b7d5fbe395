package web

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/views"
)

// sidebarSize is how many conversations the sidebar lists.
const sidebarSize = 50

// themeCookie remembers the theme a person chose in this browser ("light" or "dark"); without
// it pages follow the system's.
const themeCookie = "parley_theme"

// zoneCookie holds the browser's time zone (shell.js keeps it): the zone of a person who set
// none, for what the server groups by day (the sidebar).
const zoneCookie = "parley_tz"

// dayZone is the zone a person's days are seen in (the sidebar's Today, Yesterday…): their
// setting, else their browser's (the cookie shell.js keeps), else UTC.
func dayZone(r *http.Request, u domain.User) *time.Location {
	if loc, ok := loadZone(u.TimeZone); ok {
		return loc
	}
	if ck, err := r.Cookie(zoneCookie); err == nil {
		if z, err := url.QueryUnescape(ck.Value); err == nil {
			if loc, ok := loadZone(z); ok {
				return loc
			}
		}
	}
	return time.UTC
}

// themeOf is the theme the person chose in this browser: "light", "dark", or "" for the
// system's.
func themeOf(r *http.Request) string {
	if ck, err := r.Cookie(themeCookie); err == nil && (ck.Value == "light" || ck.Value == "dark") {
		return ck.Value
	}
	return ""
}

var conversationPath = regexp.MustCompile(`^/c/(\d+)(/.*)?$`)

// viewer is what the page layout shows of the signed-in person: their sidebar and the count
// of questions waiting for them.
func (s *Server) viewer(c echo.Context, u domain.User) views.Viewer {
	r := c.Request()
	v := views.Viewer{ID: u.ID, Name: u.Shown(), Staff: u.IsStaff(), CanSignOut: s.auth.sessions(), Live: true, TimeZone: u.TimeZone, DayZone: dayZone(r, u), Path: r.URL.Path}
	if m := conversationPath.FindStringSubmatch(r.URL.Path); m != nil {
		v.Current, _ = strconv.ParseInt(m[1], 10, 64)
		v.Live = m[2] != "" // a conversation's page has a stream of its own
	}
	v.Theme = themeOf(r)
	v.Version = s.runner.Watch().Version(s.answerScope(u))
	p, err := s.personView(r.Context(), u)
	if err != nil {
		s.log.Error("sidebar", "user", u.Name, "error", err)
	}
	v.Sidebar, v.Waiting, v.Latest = p.sidebar, p.waiting, p.latest
	if v.Staff {
		if v.NeedsReview, err = s.queue.NeedsReviewCount(r.Context()); err != nil {
			s.log.Error("review queue", "error", err)
		}
	}
	return v
}

// personView is what a person's pages show of all their conversations.
type personView struct {
	sidebar []domain.Conversation
	waiting int
	latest  domain.Conversation
}

func (s *Server) personView(ctx context.Context, u domain.User) (personView, error) {
	var p personView
	var err error
	p.sidebar, _, err = s.ledger.ListConversations(ctx, domain.ConversationFilter{UserID: u.ID, Archived: domain.ArchivedNot, Limit: sidebarSize})
	if err != nil {
		return p, err
	}
	p.waiting, p.latest, err = s.questions.Waiting(ctx, s.answerScope(u))
	return p, err
}

// answerScope is whose questions u may answer, as Waiting and Watch count accounts: u's own,
// or everyone's (0) for staff who answer on people's behalf.
func (s *Server) answerScope(u domain.User) int64 {
	if u.IsStaff() && s.auth.StaffAnswer {
		return 0
	}
	return u.ID
}

// personFeed keeps a stream's page current with the person's conversations: when one of them
// changes, the sidebar and the waiting count are read again and patched if they changed. A
// burst of changes (a run that asks, answers and ends) costs one read, a moment later.
type personFeed struct {
	s       *Server
	u       domain.User
	zone    *time.Location // the person's days
	current int64
	watch   *runner.Watcher
	timer   *time.Timer
	pending bool
	last    uint64 // a hash of the patch last sent
}

// feedDelay gathers a burst of changes into one read.
const feedDelay = 150 * time.Millisecond

func (s *Server) newPersonFeed(u domain.User, zone *time.Location, current int64) *personFeed {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &personFeed{s: s, u: u, zone: zone, current: current, watch: s.runner.Watch().Subscribe(s.answerScope(u)), timer: t}
}

// start reads what changed since the page was drawn (also while a reconnecting page was
// away), if anything did: the page's version (see views.Viewer.Version) is not the count
// now, or it has none. It is called once subscribed: a change counted later wakes the feed.
func (p *personFeed) start(pageVersion string) {
	v, err := strconv.ParseUint(pageVersion, 10, 64)
	if err != nil || v != p.s.runner.Watch().Version(p.s.answerScope(p.u)) {
		p.first()
	}
}

func (p *personFeed) close() {
	p.watch.Close()
	p.timer.Stop()
}

// first schedules the first read, at a random moment of the next second.
func (p *personFeed) first() {
	p.pending = true
	p.timer.Reset(feedDelay + rand.N(time.Second))
}

// changed notes a change; the read follows after feedDelay.
func (p *personFeed) changed() {
	if !p.pending {
		p.pending = true
		p.timer.Reset(feedDelay)
	}
}

// send patches the sidebar and the waiting count when they differ from what was sent last.
func (p *personFeed) send(ctx context.Context, w *sseWriter) error {
	p.pending = false
	pv, err := p.s.personView(ctx, p.u)
	if err != nil {
		return err
	}
	h, err := p.s.html(ctx, views.PersonPatch(pv.sidebar, p.current, p.zone, pv.waiting, pv.latest))
	if err != nil {
		return err
	}
	sum := fnv.New64a()
	sum.Write([]byte(h))
	if sum.Sum64() == p.last {
		return nil
	}
	p.last = sum.Sum64()
	w.patchElements(h, "", "", "")
	return nil
}

// handleLive is the stream of a page that shows no conversation: it keeps the sidebar and
// the waiting count current. It counts among the person's open streams.
func (s *Server) handleLive(c echo.Context) error {
	current, _ := strconv.ParseInt(c.QueryParam("c"), 10, 64)
	st := &liveStream{s: s, u: currentUser(c), zone: dayZone(c.Request(), currentUser(c)), req: identity(c.Request()), current: current, version: c.QueryParam("v"),
		access: accessKey(currentUser(c), s.viewerGroups(c))}
	return s.serveStream(c, &s.metrics.pageStreams, st.mayGoOn, st.run)
}

// handleRename gives a conversation of the person's a new title.
func (s *Server) handleRename(c echo.Context) error {
	return s.manage(c, func(ctx context.Context, id int64) error {
		title, err := domain.ValidTitle(c.FormValue("title"))
		if err != nil {
			return err
		}
		return s.library.RenameConversation(ctx, id, title)
	})
}

// handleArchive moves a conversation out of the person's lists, or back (archived=0).
func (s *Server) handleArchive(c echo.Context) error {
	return s.manage(c, func(ctx context.Context, id int64) error {
		return s.library.ArchiveConversation(ctx, id, c.FormValue("archived") != "0")
	})
}

// manage changes a conversation of the person's with change, tells their pages, and goes
// back to it (the forms are plain ones).
func (s *Server) manage(c echo.Context, change func(ctx context.Context, id int64) error) error {
	conv, err := s.writableConversation(c)
	if err != nil {
		return err
	}
	if err := change(c.Request().Context(), conv.ID); err != nil {
		return err
	}
	s.runner.Watch().Changed(conv.ID, conv.UserID)
	return c.Redirect(http.StatusSeeOther, "/c/"+strconv.FormatInt(conv.ID, 10))
}

// handleDelete removes a conversation of the person's for good, after stopping its agent;
// the audit log keeps who deleted what.
func (s *Server) handleDelete(c echo.Context) error {
	conv, err := s.writableConversation(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	s.runner.StopReply(ctx, conv.ID)
	if err := s.library.DeleteConversation(ctx, conv.ID, currentUser(c).Name); err != nil {
		return err
	}
	s.hub.Gone(conv.ID)
	s.runner.Watch().Forget(conv.ID, conv.UserID)
	return c.Redirect(http.StatusSeeOther, "/?deleted=1")
}

// handleSearch finds the person's own conversations, archived ones too: by title, and by
// every word of their messages, questions, answers and documents (the search index).
func (s *Server) handleSearch(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	d := views.SearchData{Query: strings.TrimSpace(c.QueryParam("q")), Agents: s.runner.Agents()}
	if d.Query == "" {
		return s.page(c, http.StatusOK, views.SearchPage(d))
	}
	var err error
	d.Titles, err = s.library.ConversationsTitled(ctx, u.ID, d.Query, sidebarSize)
	if err == nil {
		d.Hits, d.Common, err = s.library.Search(ctx, d.Query, domain.ConversationFilter{UserID: u.ID, Limit: sidebarSize})
	}
	if err != nil {
		return err
	}
	// A conversation found by its title is not listed again for its words.
	seen := map[int64]bool{}
	for _, t := range d.Titles {
		seen[t.ID] = true
	}
	hits := d.Hits[:0]
	for _, h := range d.Hits {
		if !seen[h.Conversation.ID] {
			hits = append(hits, h)
		}
	}
	d.Hits = hits
	return s.page(c, http.StatusOK, views.SearchPage(d))
}

// handleArchived lists the person's archived conversations.
func (s *Server) handleArchived(c echo.Context) error {
	list, _, err := s.ledger.ListConversations(c.Request().Context(), domain.ConversationFilter{UserID: currentUser(c).ID, Archived: domain.ArchivedOnly, Limit: 500})
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, views.ArchivedPage(views.ArchivedData{Conversations: list, Agents: s.runner.Agents()}))
}
