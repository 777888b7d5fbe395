package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/agent"
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
	st := &liveStream{s: s, u: currentUser(c), conv: conv, current: conv.ID, Tail: agent.Tail{Cur: streamCursor(c)}, withLen: c.QueryParam("n") == "1", req: identity(c.Request()),
		version: c.QueryParam("v"), mode: mode, access: s.accessKey(c.Request().Context(), currentUser(c)), versionFollow: versionFollow{pinned: pinned}}
	return s.serveStream(c, &s.metrics.pageStreams, st.mayGoOn, st.run)
}

// accessKey sums up what decides what a person may see and use besides the conversation's
// own owner: their role and the groups they are a member of. A stream ends when it moves,
// and the page's reconnect draws what is theirs now (see liveStream.mayGoOn).
func (s *Server) accessKey(ctx context.Context, u agent.User) string {
	return string(u.Role) + "|" + strings.Join(s.memberGroups(ctx, u.ID), ",")
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
		return agent.Errorf(agent.ETOOMANY, "You have %d Parley pages open: close some, then reload this one.", s.limits.Streams)
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
	ls.gate = gate
	// Patches render as the page did: the owner's, or staff's read-only view.
	ls.ctx, ls.w = views.WithMode(ctx, ls.mode), w
	// Follow before the first read, so no change between read and wait is missed.
	var f *agent.Follower
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
	feed := s.newPersonFeed(ls.u, ls.current)
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
	if err != nil || ls.conv.ID != 0 && !u.CanRead(ls.conv) || s.answerScope(u) != s.answerScope(ls.u) || s.accessKey(ctx, u) != ls.access {
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
func streamCursor(c echo.Context) agent.Cursor {
	last := c.Request().Header.Get("Last-Event-ID")
	if last == "" {
		n, _ := strconv.ParseInt(c.QueryParam("after"), 10, 64)
		return agent.Cursor{Event: n}
	}
	e, m, _ := strings.Cut(last, "/")
	n, _ := strconv.ParseInt(e, 10, 64)
	cur := agent.Cursor{Event: n, Message: m}
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

// liveStream is one stream's state: how far its page has got, and the message it grows.
type liveStream struct {
	s    *Server
	u    agent.User
	req  *http.Request
	ctx  context.Context
	w    *sseWriter
	conv agent.Conversation // none for a page that shows no conversation (handleLive)
	mode views.Mode         // how the conversation renders for the person
	// access is the person's accessKey when the stream began; gate lets each thing it
	// sends through only while they may follow it.
	access string
	gate   *accessGate
	// current is the conversation the page shows, marked in the sidebar; version the count
	// of changes to the person's conversations the page had seen (?v=).
	current int64
	version string
	agent.Tail
	// md renders the message the page grows, cur.Message.
	md *views.MarkdownStream
	// withLen: the reader counts text (parley bench), and is told its length.
	withLen bool
	// live are the live questions asked while the page watched, still pending: the run
	// waits for the person meanwhile, and its status line says so.
	live map[int64]bool
	versionFollow
}

// patch sends a patch of the page; a component that fails to render is logged and sends
// nothing (the page keeps what it had; a reload says more).
func (ls *liveStream) patch(comp templ.Component, selector, mode, id string) {
	if h, err := ls.s.html(ls.ctx, comp); err == nil {
		ls.w.patchElements(h, selector, mode, id)
	}
}

// id is the SSE id of the page's state: the last event, and the message it grows.
func (ls *liveStream) id() string {
	id := strconv.FormatInt(ls.Cur.Event, 10)
	if ls.Cur.Message != "" {
		id += "/" + ls.Cur.Message
	}
	return id
}

// catchUp sends what the page lacks (see agent.Follower.CatchUp).
func (ls *liveStream) catchUp(f *agent.Follower) error {
	return f.CatchUp(ls.ctx, ls.s.ledger, &ls.Tail, ls)
}

// Live grows the message being written on the page, or puts it there whole when the page
// lacks it (or, after a reconnect, does not know how much of it the page has).
func (ls *liveStream) Live(m agent.LiveText) error {
	if err := ls.gate.pass(ls.ctx); err != nil {
		return err
	}
	if ls.pinned >= 0 {
		return nil // a page of another version than the one shown, where nothing is written
	}
	if m.ID != ls.Cur.Message || ls.md == nil {
		it := views.StreamingMessage(m.ID, m.Author)
		had := m.ID == ls.Cur.Message
		ls.md = &views.MarkdownStream{}
		ls.Cur.Message = m.ID
		if had {
			ls.patch(it, "", "", ls.id())
		} else {
			ls.patch(it, "#thread", "append", ls.id())
		}
		ls.w.markdown(ls.md.Write(string(m.Text)), ls.id(), ls.withLen)
	} else if len(m.Text) > 0 {
		ls.w.markdown(ls.md.Write(string(m.Text)), "", ls.withLen)
	}
	ls.Cur.Bytes = ls.md.Len()
	return nil
}

// Event sends one committed event. Events that show nothing send nothing; their id comes
// with the next patch.
func (ls *liveStream) Event(ev agent.Event) error {
	if ev.ID <= ls.Cur.Event {
		return nil // drawn already, with the version it belongs to
	}
	if err := ls.gate.pass(ls.ctx); err != nil {
		return err
	}
	ls.Cur.Event = ev.ID
	ctx := ls.ctx
	show, switched := ls.shows(ev)
	if switched {
		return ls.redraw()
	}
	if !show {
		return nil
	}
	switch ev.Kind {
	case agent.EventMessageQueued:
		q := agent.QueuedMessage{ID: ev.ID, Author: ev.Author, Text: ev.Text, Documents: ev.Documents, At: ev.At}
		ls.patch(views.QueuedMessage(ls.conv.ID, q), "#queued", "append", ls.id())
		return nil
	case agent.EventMessageUnqueued:
		ls.w.patchElements("", "#"+queuedID(ev.Queued), "remove", ls.id())
		return nil
	}
	if ev.Kind == agent.EventUserMessage && ev.Queued != 0 {
		ls.w.patchElements("", "#"+queuedID(ev.Queued), "remove", "")
	}
	switch ev.Kind {
	case agent.EventAgentMessage:
		return ls.finished(ev)
	case agent.EventUserMessage:
		ls.patch(views.UserMessage(views.UserItem(ev)), "#thread", "append", ls.id())
	case agent.EventIntake:
		msg, err := ls.s.ledger.Event(ctx, ls.conv.ID, ev.Intake.MessageEventID)
		if err != nil {
			return err
		}
		it := views.UserItem(msg).WithIntake(*ev.Intake)
		ls.patch(views.UserMessage(it), "#"+views.UserMessageID(msg.ID), "replace", ls.id())
	case agent.EventPlan:
		plans, err := ls.s.ledger.Plans(ctx, ls.conv.ID, ev.ID)
		if err != nil {
			return err
		}
		ls.patch(views.PlanSummary(plans), "", "", "")
		ls.patch(views.PlanCurrent(plans), "", "", "")
		ls.patch(views.PlanHistory(plans), "", "", ls.id())
	case agent.EventQuestionAsked:
		rec := ev.AskedRecord()
		if rec.Live {
			if ls.live == nil {
				ls.live = map[int64]bool{}
			}
			ls.live[rec.ID] = true
			ls.patch(views.RunStatus(ls.conv, agent.StateWaiting, ""), "", "", "")
		}
		ls.patch(views.QuestionCard(views.QuestionView{Record: rec}), "#thread", "append", ls.id())
	case agent.EventQuestionApproved:
		rec, err := ls.s.questions.Question(ctx, ev.Resolution.QuestionID)
		if err != nil {
			return err
		}
		ls.patch(views.QuestionCard(views.QuestionView{Record: rec}), "#"+views.QuestionID(rec.ID), "replace", ls.id())
	case agent.EventQuestionResolved:
		rec, err := ls.s.questions.Question(ctx, ev.Resolution.QuestionID)
		if err != nil {
			return err
		}
		if rec.Live {
			// The step goes on, unless the run is over (a restart expires the live questions
			// of the runs it cut off): the status line says what the run does now.
			delete(ls.live, rec.ID)
			if c, err := ls.s.ledger.Conversation(ctx, ls.conv.ID); err == nil && len(ls.live) == 0 && c.State == agent.StateRunning {
				ls.patch(views.RunStatus(ls.conv, agent.StateRunning, ""), "", "", "")
			}
		}
		ls.patch(views.QuestionCard(views.QuestionView{Record: rec}), "#"+views.QuestionID(rec.ID), "replace", ls.id())
	case agent.EventToolCall:
		if ev.ToolCall == nil {
			break
		}
		// The first event of a call puts its card in the thread; each later one replaces it.
		card := views.ToolCard(*ev.ToolCall)
		if ev.ToolCall.Update {
			ls.patch(card, "#"+views.ToolCardID(ev.ToolCall.Key), "replace", ls.id())
		} else {
			ls.patch(card, "#thread", "append", ls.id())
		}
	case agent.EventRunState:
		clear(ls.live)
		busy := `{"_busy":false}`
		if ev.State == agent.StateRunning {
			busy = `{"_busy":true}`
		}
		ls.w.patchSignals(busy, "")
		ls.patch(views.ConversationState(ev.State), "", "", "")
		id := ls.id()
		if ev.State == agent.StateWaiting {
			// Whom it waits for: its person, or others (a group, the agent's approvers).
			if c, err := ls.s.ledger.Conversation(ctx, ls.conv.ID); err == nil {
				ls.conv.AwaitsOthers = c.AwaitsOthers
			}
		}
		if ev.State == agent.StateFailed {
			ls.patch(views.RunStatus(ls.conv, ev.State, ev.Error), "", "", "")
			ls.patch(views.ErrorNote(ev.Error), "#thread", "append", id)
		} else {
			ls.patch(views.RunStatus(ls.conv, ev.State, ev.Error), "", "", id)
		}
	}
	return nil
}

// finished sends an agent message once it is finished. The page growing it gets its last
// text and its end, which leave it as the finished message renders: nothing is sent twice.
// A page that has it in an unknown state, or marked since (interrupted, stopped), or with
// text the finished message does not keep (a form it ended in), gets it whole.
func (ls *liveStream) finished(ev agent.Event) error {
	growing := ev.MessageID == ls.Cur.Message
	md := ls.md
	ls.Cur.Message, ls.Cur.Bytes, ls.md = "", 0, nil
	it := views.AgentItem(ev)
	switch {
	case growing && md != nil && !ev.Interrupted && strings.HasPrefix(ev.Text, md.Source()):
		if rest := ev.Text[md.Len():]; rest != "" {
			ls.w.markdown(md.Write(rest), "", ls.withLen)
		}
		end := md.End()
		end.At = ev.At
		ls.w.markdown(end, ls.id(), ls.withLen)
	case growing:
		ls.patch(views.AgentMessage(it), "", "", ls.id())
	default:
		ls.patch(views.AgentMessage(it), "#thread", "append", ls.id())
	}
	return nil
}

// queuedID is the HTML id of a queued message.
func queuedID(id int64) string { return "queued-" + strconv.FormatInt(id, 10) }

// redraw draws the page's conversation again, as the version it now shows: the thread, the
// plan, the state, with the stream's cursor at the last event drawn.
func (ls *liveStream) redraw() error {
	ctx, s := ls.ctx, ls.s
	conv, err := s.ledger.Conversation(ctx, ls.conv.ID)
	if err != nil {
		return err
	}
	ls.conv = conv
	// The thread and the path followed from here come from one read of the versions: a
	// switch meanwhile comes as the next version event.
	t, path, _, _, err := s.versionThread(ctx, conv, -1)
	if err != nil {
		return err
	}
	ls.path = path
	ls.Cur.Event = max(ls.Cur.Event, t.LastEventID)
	ls.Cur.Message, ls.Cur.Bytes, ls.md = "", 0, nil
	clear(ls.live)
	busy := `{"_busy":false}`
	if t.State == agent.StateRunning {
		busy = `{"_busy":true}`
	}
	ls.w.patchSignals(busy, "")
	ls.patch(views.PlanPanel(t.Plans), "", "", "")
	ls.patch(views.ConversationState(t.State), "", "", "")
	ls.patch(views.RunStatus(conv, t.Shown(), t.Error), "", "", "")
	queued, err := s.ledger.Queued(ctx, conv.ID)
	if err != nil {
		return err
	}
	ls.patch(views.QueuedList(conv.ID, queued), "", "", "")
	ls.patch(views.ThreadSection(conv.ID, t), "", "", ls.id())
	return nil
}
