package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/agent"
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
func (s *Server) handleStream(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	// Patches render as the page did: the owner's, or staff's read-only view. The stream
	// ends with the request, or when the server shuts down.
	ctx, cancel := context.WithCancel(s.withMode(c, conv))
	defer cancel()
	defer context.AfterFunc(s.closed, cancel)()
	release, ok := s.streams.acquire(currentUser(c).ID, s.limits.Streams)
	if !ok {
		return agent.Errorf(agent.ETOOMANY, "You have %d Parley pages open: close some, then reload this one.", s.limits.Streams)
	}
	defer release()
	cur := agent.Cursor{}
	cur.Event, _ = strconv.ParseInt(c.QueryParam("after"), 10, 64)
	if last := c.Request().Header.Get("Last-Event-ID"); last != "" {
		cur = parseCursor(last)
	}
	// Follow before the first read, so no change between read and wait is missed.
	f := s.hub.Follow(conv.ID)
	defer f.Close()

	w := c.Response()
	_ = http.NewResponseController(w.Writer).SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ls := &liveStream{s: s, ctx: ctx, w: newSSEWriter(w.Writer), conv: conv.ID, cur: cur, withLen: c.QueryParam("n") == "1"}
	// Any patch tells the page the stream is up again.
	ls.w.patchSignals(`{"_reconnecting":false}`, "")
	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	for {
		if err := ls.catchUp(f); err != nil {
			if ctx.Err() == nil {
				s.log.Error("stream", "conversation", conv.ID, "error", err)
			}
			return nil
		}
		if err := ls.w.flush(); err != nil {
			return nil // the client went away; it will resume from its last id
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.Wake():
		case <-heartbeat.C:
			// The session may have ended, or staff stopped being staff: the stream ends too,
			// and the page's reconnect is asked to sign in.
			if u, err := s.identify(c); err != nil || !u.CanRead(conv) {
				return nil
			}
			ls.w.comment("heartbeat")
		}
	}
}

// parseCursor reads a Last-Event-ID: "E", or "E/m" while the page grows message m.
func parseCursor(id string) agent.Cursor {
	e, m, _ := strings.Cut(id, "/")
	n, _ := strconv.ParseInt(e, 10, 64)
	cur := agent.Cursor{Event: n, Message: m}
	if m != "" {
		cur.Bytes = -1 // the page has the message, but how much of it is not known
	}
	return cur
}

// liveStream is one stream's state: how far its page has got, and the message it grows.
type liveStream struct {
	s    *Server
	ctx  context.Context
	w    *sseWriter
	conv int64
	cur  agent.Cursor
	// md renders the message the page grows, cur.Message.
	md *views.MarkdownStream
	// withLen: the reader counts text (parley bench), and is told its length.
	withLen bool
	// buffers reused from one wake-up to the next
	events []agent.Event
	text   []byte
}

// id is the SSE id of the page's state: the last event, and the message it grows.
func (ls *liveStream) id() string {
	id := strconv.FormatInt(ls.cur.Event, 10)
	if ls.cur.Message != "" {
		id += "/" + ls.cur.Message
	}
	return id
}

// catchUp sends what the page lacks: events from the hub, or from the log when the hub does
// not go back far enough, then the message being written.
func (ls *liveStream) catchUp(f *agent.Follower) error {
	for {
		u, ok := f.Since(ls.cur, ls.events[:0], ls.text[:0])
		if !ok {
			events, err := ls.s.db.Events(ls.ctx, ls.conv, ls.cur.Event)
			if err != nil {
				return err
			}
			for _, ev := range events {
				if err := ls.event(ev); err != nil {
					return err
				}
			}
			f.Synced(ls.cur.Event)
			continue
		}
		ls.events, ls.text = u.Events, u.Message.Text
		for _, ev := range u.Events {
			if err := ls.event(ev); err != nil {
				return err
			}
		}
		if u.Message.ID != "" {
			ls.live(u.Message)
		}
		return nil
	}
}

// live grows the message being written on the page, or puts it there whole when the page
// lacks it (or, after a reconnect, does not know how much of it the page has).
func (ls *liveStream) live(m agent.LiveText) {
	if m.ID != ls.cur.Message || ls.md == nil {
		it := views.StreamingMessage(m.ID, m.Author)
		had := m.ID == ls.cur.Message
		ls.md = &views.MarkdownStream{}
		ls.cur.Message = m.ID
		if had {
			ls.w.patchElements(html(ls.ctx, it), "", "", ls.id())
		} else {
			ls.w.patchElements(html(ls.ctx, it), "#thread", "append", ls.id())
		}
		ls.w.markdown(ls.md.Write(string(m.Text)), ls.id(), ls.withLen)
	} else if len(m.Text) > 0 {
		ls.w.markdown(ls.md.Write(string(m.Text)), "", ls.withLen)
	}
	ls.cur.Bytes = ls.md.Len()
}

// event sends one committed event. Events that show nothing send nothing; their id comes
// with the next patch.
func (ls *liveStream) event(ev agent.Event) error {
	ls.cur.Event = ev.ID
	ctx := ls.ctx
	switch ev.Kind {
	case agent.EventAgentMessage:
		return ls.finished(ev)
	case agent.EventUserMessage:
		ls.w.patchElements(html(ctx, views.UserMessage(views.UserItem(ev))), "#thread", "append", ls.id())
	case agent.EventIntake:
		msg, err := ls.s.db.Event(ctx, ls.conv, ev.Intake.MessageEventID)
		if err != nil {
			return err
		}
		it := views.UserItem(msg).WithIntake(*ev.Intake)
		ls.w.patchElements(html(ctx, views.UserMessage(it)), "#"+views.UserMessageID(msg.ID), "replace", ls.id())
	case agent.EventPlan:
		plans, err := ls.s.db.Plans(ctx, ls.conv, ev.ID)
		if err != nil {
			return err
		}
		ls.w.patchElements(html(ctx, views.PlanSummary(plans)), "", "", "")
		ls.w.patchElements(html(ctx, views.PlanCurrent(plans)), "", "", "")
		ls.w.patchElements(html(ctx, views.PlanHistory(plans)), "", "", ls.id())
	case agent.EventQuestionAsked:
		rec := agent.QuestionRecord{Question: *ev.Question, ConversationID: ev.ConversationID, RunID: ev.RunID, AskedAt: ev.At}
		ls.w.patchElements(html(ctx, views.QuestionCard(views.QuestionView{Record: rec})), "#thread", "append", ls.id())
	case agent.EventQuestionResolved:
		rec, err := ls.s.db.Question(ctx, ev.Resolution.QuestionID)
		if err != nil {
			return err
		}
		ls.w.patchElements(html(ctx, views.QuestionCard(views.QuestionView{Record: rec})), "#"+views.QuestionID(rec.ID), "replace", ls.id())
	case agent.EventRunState:
		busy := `{"_busy":false}`
		if ev.State == agent.StateRunning {
			busy = `{"_busy":true}`
		}
		ls.w.patchSignals(busy, "")
		ls.w.patchElements(html(ctx, views.ConversationState(ev.State)), "", "", "")
		id := ls.id()
		if ev.State == agent.StateFailed {
			ls.w.patchElements(html(ctx, views.RunStatus(ls.conv, ev.State, ev.Error)), "", "", "")
			ls.w.patchElements(html(ctx, views.ErrorNote(ev.Error)), "#thread", "append", id)
		} else {
			ls.w.patchElements(html(ctx, views.RunStatus(ls.conv, ev.State, ev.Error)), "", "", id)
		}
	}
	return nil
}

// finished sends an agent message once it is finished. The page growing it gets its last
// text and its end, which leave it as the finished message renders: nothing is sent twice.
// A page that has it in an unknown state, or marked since (interrupted, stopped), or with
// text the finished message does not keep (a form it ended in), gets it whole.
func (ls *liveStream) finished(ev agent.Event) error {
	growing := ev.MessageID == ls.cur.Message
	md := ls.md
	ls.cur.Message, ls.cur.Bytes, ls.md = "", 0, nil
	it := views.AgentItem(ev)
	switch {
	case growing && md != nil && !ev.Interrupted && strings.HasPrefix(ev.Text, md.Source()):
		if rest := ev.Text[md.Len():]; rest != "" {
			ls.w.markdown(md.Write(rest), "", ls.withLen)
		}
		ls.w.markdown(md.End(), ls.id(), ls.withLen)
	case growing:
		ls.w.patchElements(html(ls.ctx, views.AgentMessage(it)), "", "", ls.id())
	default:
		ls.w.patchElements(html(ls.ctx, views.AgentMessage(it)), "#thread", "append", ls.id())
	}
	return nil
}
