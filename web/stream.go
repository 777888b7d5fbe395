package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/views"
)

// handleStream is the conversation's one SSE stream. It sends every event after the client's
// last one (Last-Event-ID on reconnect, ?after= on first connect), then follows the
// conversation live through the runner's hub: committed events from its replay buffer (from
// the log when the client is further behind), and the message being written as it grows.
//
// Each patch that completes a log event carries its id; while the page grows a message, ids
// name it too ("E/m"), so a reconnect knows the page has it and sends it whole, once.
// One account may hold Limits.Streams streams at once; past that it gets 429.
//
// The stream takes the connection over from net/http (HTTP/1.1, ended by closing) and runs
// on a goroutine of its own: an open stream then holds its connection and a little state,
// not the buffers of a request, and each event is one write.
func (s *Server) handleStream(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	pinned := pinnedVersion(c, conv)
	mode, err := s.pageMode(c, conv)
	if err != nil {
		return err
	}
	u := currentUser(c)
	st := &liveStream{s: s, u: u, zone: dayZone(c.Request(), u), conv: conv, owner: conv.UserID, current: conv.ID, Tail: runner.Tail{Cur: streamCursor(c)}, withLen: c.QueryParam("n") == "1", req: identity(c.Request()),
		version: c.QueryParam("v"), mode: mode, access: accessKey(u, mode.Groups), versionFollow: versionFollow{pinned: pinned}}
	return s.serveStream(c, &s.metrics.pageStreams, st.mayGoOn, st.run)
}

// accessKey sums up what decides what a person may see and use besides the conversation's
// own owner: their role and the groups they are a member of. A stream ends when it moves,
// and the page's reconnect draws what is theirs now (see liveStream.mayGoOn).
func accessKey(u domain.User, groups []string) string {
	return string(u.Role) + "|" + strings.Join(groups, ",")
}

// identity keeps of a request what identify reads, for a stream to check, whenever someone's
// access changes, that its person may still follow it.
func identity(r *http.Request) *http.Request {
	return &http.Request{Host: r.Host, RemoteAddr: r.RemoteAddr, TLS: r.TLS, Header: r.Header}
}

// serveStream answers with an SSE stream that run writes until ctx ends: when the client
// goes, the server shuts down, or its person may no longer follow it (check, run by the
// server's watch of open streams). One account may hold Limits.Streams of them at once (past
// that: 429). The gauge open counts it while it is open.
//
// The stream takes the connection over from net/http (HTTP/1.1, ended by closing) and runs
// on a goroutine of its own: an open stream then holds its connection and a little state,
// not the buffers of a request, and each event is one write.
func (s *Server) serveStream(c echo.Context, open *gauge, check func(context.Context) (time.Time, bool), body func(ctx context.Context, w *sseWriter, gate *accessGate)) error {
	run := func(ctx context.Context, w *sseWriter) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.closed, cancel)()
		remove, gate, ok := s.watch(ctx, cancel, check)
		defer remove()
		if ok {
			body(ctx, w, gate)
		}
	}
	free, ok := s.streams.acquire(c.Request().Context(), currentUser(c).ID, s.limits.Streams)
	if !ok {
		return domain.Errorf(domain.ETOOMANY, "You have %d Parley pages open: close some, then reload this one.", s.limits.Streams)
	}
	open.Inc()
	release := func() { free(); open.Dec() }
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("X-Accel-Buffering", "no")
	conn, _, err := http.NewResponseController(c.Response().Writer).Hijack()
	if err != nil {
		// No connection to take over (HTTP/2): the stream runs on the request.
		defer release()
		_ = http.NewResponseController(c.Response().Writer).SetWriteDeadline(time.Time{})
		c.Response().WriteHeader(http.StatusOK)
		run(c.Request().Context(), newSSEWriter(c.Response().Writer))
		return nil
	}
	head := []byte("HTTP/1.1 200 OK\r\n")
	for k, vs := range h {
		for _, v := range vs {
			head = append(head, k+": "+v+"\r\n"...)
		}
	}
	head = append(head, "Connection: close\r\n\r\n"...)
	if _, err := conn.Write(head); err != nil {
		conn.Close()
		release()
		return nil
	}
	// The stream ends when the client closes the connection (a read of it fails: a client
	// sends nothing more on it).
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		var b [1]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				cancel()
				return
			}
		}
	}()
	s.streamsMu.Lock()
	if s.closed.Err() != nil { // shutting down: no stream begins
		s.streamsMu.Unlock()
		cancel()
		conn.Close()
		release()
		return nil
	}
	s.streamsWG.Add(1)
	s.streamsMu.Unlock()
	go func() {
		defer s.streamsWG.Done()
		defer release()
		defer conn.Close()
		defer cancel()
		run(ctx, newSSEWriter(conn))
	}()
	return nil
}

// run sends the stream until ctx ends: the conversation's (when it has one) and the
// person's sidebar and waiting count.
func (ls *liveStream) run(ctx context.Context, w *sseWriter, gate *accessGate) {
	s := ls.s
	// Patches render as the page did: the owner's, or staff's read-only view.
	ls.ctx, ls.w = views.WithMode(ctx, ls.mode), w
	if ls.conv.ID != 0 && ls.u.ID != 0 && ls.conv.UserID == ls.u.ID {
		// A reply finished, or a question resolved, while the page is open offers its owner
		// its rating: unrated, so there is nothing to read (a redraw reads what they said).
		ls.ctx = views.WithFeedback(ls.ctx, views.Feedback{Replies: true})
	}
	ls.in = gated{ls.ctx, gate, ls}
	// Follow before the first read, so no change between read and wait is missed.
	var f *runner.Follower
	var wake <-chan struct{}
	if ls.conv.ID != 0 {
		f = s.hub.Follow(ls.conv.ID)
		defer f.Close()
		wake = f.Wake()
		if err := ls.load(ctx, s, ls.conv); err != nil {
			s.log.Error("stream", "conversation", ls.conv.ID, "error", err)
			return
		}
	}
	if ls.mode.Closed != "" {
		// The page may have been drawn while the person could still use the agent: its
		// message box gives way to why it is closed.
		ls.patch(views.ClosedNote(ls.mode.Closed), "", "", "")
	}
	feed := s.newPersonFeed(ls.u, ls.zone, ls.current)
	defer feed.close()
	// Any patch tells the page the stream is up again.
	ls.w.patchSignals(`{"_reconnecting":false}`, "")
	// What changed since the page was drawn; after a restart every page reconnects at once,
	// so their reads are spread over a second.
	feed.start(ls.version)
	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	for {
		if !gate.open(ctx) {
			return // access changed: not theirs to follow any more
		}
		if f != nil {
			if err := ls.catchUp(f); err != nil {
				if ctx.Err() == nil && !errors.Is(err, errAccessChanged) {
					s.log.Error("stream", "conversation", ls.conv.ID, "error", err)
				}
				return
			}
		}
		if err := ls.w.flush(); err != nil {
			return // the client went away; it will resume from its last id
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
			if f.Gone() {
				return // deleted: the page's reconnect is told it is not found
			}
			if ctx.Err() != nil {
				return // ended (a change of access, the sweep) before what woke it
			}
		case <-feed.watch.C:
			feed.changed()
		case <-feed.timer.C:
			if !gate.open(ctx) {
				return
			}
			if err := feed.send(ctx, ls.w); err != nil && ctx.Err() == nil {
				// The sidebar stays as it was; the next change reads it again.
				s.log.Error("stream", "sidebar", ls.u.Name, "error", err)
			}
		case <-heartbeat.C:
			ls.w.comment("heartbeat")
		}
	}
}

// mayGoOn reports whether the person may still follow the stream: the session has not ended,
// and they may still read the conversation, as staff still or no longer (the page's
// reconnect is then asked to sign in, or refused). A page left open is not activity: the
// check does not keep the session alive. It says when to check again if nothing changes.
func (ls *liveStream) mayGoOn(ctx context.Context) (time.Time, bool) {
	s := ls.s
	u, ends, err := s.identifyUntil(ls.req.WithContext(store.Peek(ctx)))
	if err != nil || ls.owner != 0 && !u.CanRead(domain.Conversation{UserID: ls.owner}) || s.answerScope(u) != s.answerScope(ls.u) ||
		accessKey(u, s.memberGroups(ctx, u.ID)) != ls.access {
		return time.Time{}, false
	}
	if !ends.IsZero() {
		ends = ends.Add(10 * time.Millisecond) // a moment after, so that the check then finds it ended
	}
	return ends, true
}

// streamCursor is where a stream starts: after its client's Last-Event-ID when it
// reconnects, else after event ?after= (0: from the start). An id is "E"; "E/m" while the
// page grows message m (how much of it the page has is not known: it gets it whole); or
// "E/m/bytes" from the API's stream, which resumes the message from there.
func streamCursor(c echo.Context) runner.Cursor {
	last := c.Request().Header.Get("Last-Event-ID")
	if last == "" {
		n, _ := strconv.ParseInt(c.QueryParam("after"), 10, 64)
		return runner.Cursor{Event: n}
	}
	e, m, _ := strings.Cut(last, "/")
	n, _ := strconv.ParseInt(e, 10, 64)
	cur := runner.Cursor{Event: n, Message: m}
	if m != "" {
		cur.Bytes = -1 // the reader has the message, but how much of it is not known
		if msg, b, ok := strings.Cut(m, "/"); ok {
			cur.Message = msg
			if n, err := strconv.Atoi(b); err == nil && n >= 0 {
				cur.Bytes = n
			}
		}
	}
	return cur
}
