package web

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/store"
)

// apiEvents is a conversation's event stream for programs: Server-Sent Events whose data is
// one line of JSON. Like the page's stream it sends everything after the client's cursor
// (Last-Event-ID on reconnect, ?after= on first connect), then follows the conversation live:
// questions and their resolutions, plans, run states, each finished message, and the
// message being written, piece by piece. While a message is being written the cursor names
// how much of it the client has ("E/m/bytes"), so a reconnect resumes it byte for byte.
//
// The stream ends when the server shuts down, the conversation is deleted, or the token is
// revoked (at once when revoked on this server, else at the next heartbeat's check) or its
// person may no longer read the conversation.
func (s *Server) apiEvents(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	secret, _ := bearer(c.Request())
	st := &apiStream{s: s, conv: conv, Tail: runner.Tail{Cur: streamCursor(c)}, secret: secret, token: currentToken(c).ID, versionFollow: versionFollow{pinned: -1}}
	return s.serveStream(c, &s.metrics.apiStreams, st.mayGoOn, st.run)
}

// apiStream is one API stream's state: how far its client has got.
type apiStream struct {
	s      *Server
	conv   domain.Conversation
	secret string
	token  int64
	ctx    context.Context
	w      *sseWriter
	runner.Tail
	versionFollow
}

func (as *apiStream) run(ctx context.Context, w *sseWriter, gate *accessGate) {
	s := as.s
	as.ctx, as.w = ctx, w
	f := s.hub.Follow(as.conv.ID)
	defer f.Close()
	if err := as.load(ctx, s, as.conv); err != nil {
		s.log.Error("api stream", "conversation", as.conv.ID, "error", err)
		return
	}
	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	in := &gated{ctx, gate, as}
	for {
		if !gate.open(ctx) {
			return // access changed: not theirs to follow any more
		}
		if err := f.CatchUp(ctx, s.ledger, &as.Tail, in); err != nil {
			if ctx.Err() == nil && !errors.Is(err, errAccessChanged) {
				s.log.Error("api stream", "conversation", as.conv.ID, "error", err)
			}
			return
		}
		if err := w.flush(); err != nil {
			return // the client went away; it resumes from its last id
		}
		select {
		case <-ctx.Done():
			return
		case <-f.Wake():
			if f.Gone() {
				as.send(api.ConversationDeleted, "", api.DeletedEvent{})
				_ = w.flush()
				return
			}
			if ctx.Err() != nil {
				return // ended (a change of access) before what woke it: it gets nothing more
			}
		case <-heartbeat.C:
			w.comment("heartbeat")
		}
	}
}

// mayGoOn reports whether the token still stands and its person may still read the
// conversation. The check is not activity.
func (as *apiStream) mayGoOn(ctx context.Context) (time.Time, bool) {
	u, _, err := as.s.tokens.TokenUser(store.Peek(ctx), as.secret)
	return time.Time{}, err == nil && u.CanRead(as.conv)
}

// id is the SSE id of the client's state: the last event, and the message it grows.
func (as *apiStream) id() string {
	id := strconv.FormatInt(as.Cur.Event, 10)
	if as.Cur.Message != "" {
		id += "/" + as.Cur.Message + "/" + strconv.Itoa(as.Cur.Bytes)
	}
	return id
}

// send writes one event whose data is v as JSON.
func (as *apiStream) send(event, id string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		as.s.log.Error("api stream", "event", event, "error", err)
		return
	}
	as.w.json(event, id, b)
}

// Event sends one committed event; kinds a client has no use for (checkpoints, intake)
// send nothing, and their id comes with the next event.
func (as *apiStream) Event(ev domain.Event) error {
	as.Cur.Event = ev.ID
	head := api.EventHead{EventID: ev.ID, At: ev.At}
	show, switched := as.shows(ev)
	if switched {
		// Another version shows from here: the client reads the conversation again.
		conv, err := as.s.ledger.Conversation(as.ctx, as.conv.ID)
		if err != nil {
			return err
		}
		if err := as.load(as.ctx, as.s, conv); err != nil {
			return err
		}
		as.Cur.Message, as.Cur.Bytes = "", 0
		as.send(api.VersionShown, as.id(), api.VersionEvent{EventHead: head, Version: ev.Shown, Reason: ev.Reason})
		return nil
	}
	if !show {
		return nil
	}
	switch ev.Kind {
	case domain.EventMessageQueued:
		as.send(api.MessageQueued, as.id(), api.QueuedEvent{EventHead: head, Queued: api.Queued{ID: ev.ID, Author: ev.Author, Text: ev.Text, Documents: ev.Documents, At: ev.At}})
	case domain.EventMessageUnqueued:
		as.send(api.MessageUnqueued, as.id(), api.UnqueuedEvent{EventHead: head, ID: ev.Queued, Sent: false})
	case domain.EventUserMessage:
		if ev.Queued != 0 {
			as.send(api.MessageUnqueued, as.id(), api.UnqueuedEvent{EventHead: head, ID: ev.Queued, Sent: true})
		}
	}
	switch ev.Kind {
	case domain.EventUserMessage:
		as.send(api.MessageDone, as.id(), api.MessageOf(ev))
	case domain.EventAgentMessage:
		if ev.MessageID == as.Cur.Message {
			as.Cur.Message, as.Cur.Bytes = "", 0
		}
		as.send(api.MessageDone, as.id(), api.MessageOf(ev))
	case domain.EventPlan:
		as.send(api.Plan, as.id(), api.PlanEvent{EventHead: head, Plan: ev.Plan})
	case domain.EventQuestionAsked:
		rec := ev.AskedRecord()
		as.send(api.QuestionAsked, as.id(), api.AskedEvent{EventHead: head, Question: api.QuestionOf(rec)})
	case domain.EventQuestionResolved:
		as.send(api.QuestionResolved, as.id(), api.ResolvedEvent{EventHead: head, QuestionID: ev.Resolution.QuestionID, Resolution: ev.Resolution})
	case domain.EventRunState:
		if ev.State != domain.StateRunning {
			as.Cur.Message, as.Cur.Bytes = "", 0 // the step ended: its message with it
		}
		as.send(api.RunState, as.id(), api.RunStateEvent{EventHead: head, RunID: ev.RunID, State: ev.State, Error: ev.Error})
	case domain.EventToolCall:
		if ev.ToolCall != nil {
			as.send(api.ToolCall, as.id(), api.ToolEvent{EventHead: head, ToolCall: ev.ToolCall})
		}
	}
	return nil
}

// Live sends the next piece of the message being written, from where the client is.
func (as *apiStream) Live(m runner.LiveText) error {
	if len(m.Text) == 0 {
		return nil
	}
	as.Cur.Message, as.Cur.Bytes = m.ID, m.From+len(m.Text)
	as.send(api.MessageDelta, as.id(), api.Delta{EventID: as.Cur.Event, MessageID: m.ID, Author: m.Author, Offset: m.From, Text: string(m.Text)})
	return nil
}
