package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/views"
)

// liveStream is one stream's state: how far its page has got, and the message it grows.
type liveStream struct {
	s    *Server
	u    domain.User
	zone *time.Location // the person's days, for the sidebar
	req  *http.Request
	ctx  context.Context
	w    *sseWriter
	conv domain.Conversation // none for a page that shows no conversation (handleLive)
	// owner is the conversation's owner, for mayGoOn's check: conv changes as the stream
	// goes, on its goroutine, while the check runs on the server's watch.
	owner int64
	mode  views.Mode // how the conversation renders for the person
	// access is the person's accessKey when the stream began; in is the stream as the reader
	// of its catch-ups, through its gate: each thing it sends goes through only while they
	// may follow it.
	access string
	in     gated
	// current is the conversation the page shows, marked in the sidebar; version the count
	// of changes to the person's conversations the page had seen (?v=).
	current int64
	version string
	runner.Tail
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

// busy tells the page whether the agent is at work (its Stop button, the composer's queue).
func (ls *liveStream) busy(state domain.RunState) {
	if state == domain.StateRunning {
		ls.w.patchSignals(`{"_busy":true}`, "")
	} else {
		ls.w.patchSignals(`{"_busy":false}`, "")
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

// catchUp sends what the page lacks (see runner.Follower.CatchUp).
func (ls *liveStream) catchUp(f *runner.Follower) error {
	return f.CatchUp(ls.ctx, ls.s.ledger, &ls.Tail, &ls.in)
}

// Live grows the message being written on the page, or puts it there whole when the page
// lacks it (or, after a reconnect, does not know how much of it the page has).
func (ls *liveStream) Live(m runner.LiveText) error {
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
func (ls *liveStream) Event(ev domain.Event) error {
	if ev.ID <= ls.Cur.Event {
		return nil // drawn already, with the version it belongs to
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
	case domain.EventMessageQueued:
		q := domain.QueuedMessage{ID: ev.ID, Author: ev.Author, Text: ev.Text, Documents: ev.Documents, At: ev.At}
		ls.patch(views.QueuedMessage(ls.conv.ID, q), "#queued", "append", ls.id())
		return nil
	case domain.EventMessageUnqueued:
		ls.w.patchElements("", "#"+queuedID(ev.Queued), "remove", ls.id())
		return nil
	}
	if ev.Kind == domain.EventUserMessage && ev.Queued != 0 {
		ls.w.patchElements("", "#"+queuedID(ev.Queued), "remove", "")
	}
	switch ev.Kind {
	case domain.EventAgentMessage:
		return ls.finished(ev)
	case domain.EventUserMessage:
		ls.patch(views.UserMessage(views.UserItem(ev)), "#thread", "append", ls.id())
	case domain.EventIntake:
		msg, err := ls.s.ledger.Event(ctx, ls.conv.ID, ev.Intake.MessageEventID)
		if err != nil {
			return err
		}
		it := views.UserItem(msg).WithIntake(*ev.Intake)
		ls.patch(views.UserMessage(it), "#"+views.UserMessageID(msg.ID), "replace", ls.id())
	case domain.EventPlan:
		plans, err := ls.s.ledger.Plans(ctx, ls.conv.ID, ev.ID)
		if err != nil {
			return err
		}
		ls.patch(views.PlanSummary(plans), "", "", "")
		ls.patch(views.PlanCurrent(plans), "", "", "")
		ls.patch(views.PlanHistory(plans), "", "", ls.id())
	case domain.EventQuestionAsked:
		rec := ev.AskedRecord()
		if rec.Live {
			if ls.live == nil {
				ls.live = map[int64]bool{}
			}
			ls.live[rec.ID] = true
			ls.patch(views.RunStatus(ls.conv, domain.ShownState(domain.StateRunning, len(ls.live)), ""), "", "", "")
		}
		ls.patch(views.QuestionCard(views.QuestionView{Record: rec}), "#thread", "append", ls.id())
	case domain.EventQuestionApproved:
		rec, err := ls.s.questions.Question(ctx, ev.Resolution.QuestionID)
		if err != nil {
			return err
		}
		ls.patch(views.QuestionCard(views.QuestionView{Record: rec}), "#"+views.QuestionID(rec.ID), "replace", ls.id())
	case domain.EventQuestionResolved:
		rec, err := ls.s.questions.Question(ctx, ev.Resolution.QuestionID)
		if err != nil {
			return err
		}
		if rec.Live {
			// The step goes on, unless the run is over (a restart expires the live questions
			// of the runs it cut off): the status line says what the run does now.
			delete(ls.live, rec.ID)
			if c, err := ls.s.ledger.Conversation(ctx, ls.conv.ID); err == nil && len(ls.live) == 0 && c.State == domain.StateRunning {
				ls.patch(views.RunStatus(ls.conv, domain.ShownState(c.State, len(ls.live)), ""), "", "", "")
			}
		}
		ls.patch(views.QuestionCard(views.QuestionView{Record: rec}), "#"+views.QuestionID(rec.ID), "replace", ls.id())
	case domain.EventToolCall:
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
	case domain.EventRunState:
		clear(ls.live)
		ls.busy(ev.State)
		ls.patch(views.ConversationState(ev.State), "", "", "")
		id := ls.id()
		if ev.State == domain.StateWaiting {
			// Whom it waits for: its person, or others (a group, the agent's approvers).
			if c, err := ls.s.ledger.Conversation(ctx, ls.conv.ID); err == nil {
				ls.conv.AwaitsOthers = c.AwaitsOthers
			}
		}
		if ev.State == domain.StateFailed {
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
func (ls *liveStream) finished(ev domain.Event) error {
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
		// Finished: it offers its rating, as the finished message renders.
		if views.RatesReplies(ls.ctx) {
			ls.patch(views.ItemFeedback(ev.ConversationID, domain.ItemReply, ev.ID), "#"+views.MessageID(ev.MessageID), "append", "")
		}
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
	// The thread shows its opinions as its owner gave them.
	if ctx, err = s.withFeedback(ctx, ls.u, conv, false); err != nil {
		return err
	}
	ls.ctx = ctx
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
	ls.busy(t.State)
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
