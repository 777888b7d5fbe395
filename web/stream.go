package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/starfederation/datastar-go/datastar"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/views"
)

// handleStream is the conversation's one SSE stream. It sends every event after the client's
// last one (Last-Event-ID on reconnect, ?after= on first connect), then follows the log live.
// Each SSE event carries the id of the log event it completes, so a reconnect resumes exactly.
// One account may hold Limits.Streams streams at once; past that it gets 429.
func (s *Server) handleStream(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	id := conv.ID
	// Patches render as the page did: the owner's, or staff's read-only view.
	ctx := s.withMode(c, conv)
	release, ok := s.streams.acquire(currentUser(c).ID, s.limits.Streams)
	if !ok {
		return agent.Errorf(agent.ETOOMANY, "You have %d Parley pages open: close some, then reload this one.", s.limits.Streams)
	}
	defer release()
	after, _ := strconv.ParseInt(c.QueryParam("after"), 10, 64)
	if last := c.Request().Header.Get("Last-Event-ID"); last != "" {
		if n, err := strconv.ParseInt(last, 10, 64); err == nil {
			after = n
		}
	}
	// Subscribe before the first read, so no change between read and wait is missed.
	wake, unsubscribe := s.broker.subscribe(id)
	defer unsubscribe()

	sse := newSSE(c)
	// Any patch tells the page the stream is up again.
	if err := sse.MarshalAndPatchSignals(map[string]any{"_reconnecting": false}); err != nil {
		return nil
	}
	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	p := &projector{s: s, sse: sse, conversationID: id}
	for {
		events, err := s.db.Events(ctx, id, after)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("stream events", "conversation", id, "error", err)
			}
			return nil
		}
		for _, ev := range events {
			if err := p.send(ctx, ev); err != nil {
				return nil // the client went away; it will resume from its last id
			}
			after = ev.ID
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		case <-wake:
		case <-heartbeat.C:
			// The session may have ended, or staff stopped being staff: the stream ends too,
			// and the page's reconnect is asked to sign in.
			if u, err := s.identify(c); err != nil || !u.CanRead(conv) {
				return nil
			}
			if _, err := c.Response().Write([]byte(": heartbeat\n\n")); err != nil {
				return nil
			}
			if err := http.NewResponseController(c.Response().Writer).Flush(); err != nil {
				return nil
			}
		}
	}
}

// projector turns log events into Datastar patches of the conversation page.
type projector struct {
	s              *Server
	sse            *datastar.ServerSentEventGenerator
	conversationID int64
}

type patch struct {
	html string
	opts []datastar.PatchElementOption
}

func (p *projector) send(ctx context.Context, ev agent.Event) error {
	patches, signals, err := p.patches(ctx, ev)
	if err != nil {
		return err
	}
	// Signals and morphs are idempotent; the last patch (an append, where there is one) carries
	// the event id, so a connection lost midway replays the event rather than skipping it.
	id := strconv.FormatInt(ev.ID, 10)
	if signals != nil {
		b, _ := json.Marshal(signals)
		var opts []datastar.PatchSignalsOption
		if len(patches) == 0 {
			opts = append(opts, datastar.WithPatchSignalsEventID(id))
		}
		if err := p.sse.PatchSignals(b, opts...); err != nil {
			return err
		}
	}
	for i, pt := range patches {
		opts := pt.opts
		if i == len(patches)-1 {
			opts = append(opts, datastar.WithPatchElementsEventID(id))
		}
		if err := p.sse.PatchElements(pt.html, opts...); err != nil {
			return err
		}
	}
	return nil
}

func appendTo(selector string) []datastar.PatchElementOption {
	return []datastar.PatchElementOption{datastar.WithSelector(selector), datastar.WithModeAppend()}
}

// patches says how one event changes the page. Events that show nothing return no patch;
// their id is carried by the next event that does.
func (p *projector) patches(ctx context.Context, ev agent.Event) ([]patch, map[string]any, error) {
	switch ev.Kind {
	case agent.EventUserMessage:
		return []patch{{html(ctx, views.UserMessage(views.UserItem(ev))), appendTo("#thread")}}, nil, nil
	case agent.EventIntake:
		msg, err := p.s.db.Event(ctx, p.conversationID, ev.Intake.MessageEventID)
		if err != nil {
			return nil, nil, err
		}
		it := views.UserItem(msg).WithIntake(*ev.Intake)
		return []patch{{html(ctx, views.UserMessage(it)), []datastar.PatchElementOption{datastar.WithSelectorID(views.UserMessageID(msg.ID)), datastar.WithModeReplace()}}}, nil, nil
	case agent.EventTextDelta:
		if ev.Start {
			it := views.Item{Kind: views.ItemAgent, MessageID: ev.MessageID, Author: ev.Author, Text: ev.Text, Streaming: true}
			return []patch{{html(ctx, views.AgentMessage(it)), appendTo("#thread")}}, nil, nil
		}
		return []patch{{html(ctx, views.Delta(ev.Text)), appendTo("#" + views.MessageID(ev.MessageID) + "-body")}}, nil, nil
	case agent.EventAgentMessage:
		it := views.Item{Kind: views.ItemAgent, MessageID: ev.MessageID, Author: ev.Author, Text: ev.Text, Interrupted: ev.Interrupted}
		if ev.Start {
			return []patch{{html(ctx, views.AgentMessage(it)), appendTo("#thread")}}, nil, nil
		}
		return []patch{{html(ctx, views.AgentMessage(it)), []datastar.PatchElementOption{datastar.WithSelectorID(views.MessageID(ev.MessageID)), datastar.WithModeReplace()}}}, nil, nil
	case agent.EventPlan:
		plans, err := p.s.db.Plans(ctx, p.conversationID, ev.ID)
		if err != nil {
			return nil, nil, err
		}
		return []patch{{html(ctx, views.PlanSummary(plans)), nil}, {html(ctx, views.PlanCurrent(plans)), nil}, {html(ctx, views.PlanHistory(plans)), nil}}, nil, nil
	case agent.EventQuestionAsked:
		rec := agent.QuestionRecord{Question: *ev.Question, ConversationID: ev.ConversationID, RunID: ev.RunID, AskedAt: ev.At}
		return []patch{{html(ctx, views.QuestionCard(views.QuestionView{Record: rec})), appendTo("#thread")}}, nil, nil
	case agent.EventQuestionResolved:
		rec, err := p.s.db.Question(ctx, ev.Resolution.QuestionID)
		if err != nil {
			return nil, nil, err
		}
		return []patch{{html(ctx, views.QuestionCard(views.QuestionView{Record: rec})), []datastar.PatchElementOption{datastar.WithSelectorID(views.QuestionID(rec.ID)), datastar.WithModeReplace()}}}, nil, nil
	case agent.EventRunState:
		ps := []patch{
			{html(ctx, views.ConversationState(ev.State)), nil},
			{html(ctx, views.RunStatus(p.conversationID, ev.State, ev.Error)), nil},
		}
		if ev.State == agent.StateFailed {
			ps = append(ps, patch{html(ctx, views.ErrorNote(ev.Error)), appendTo("#thread")})
		}
		return ps, map[string]any{"_busy": ev.State == agent.StateRunning}, nil
	}
	return nil, nil, nil
}
