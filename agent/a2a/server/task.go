package web

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/parley-chat/parley/agent"
)

// errShuttingDown ends an execution when Parley stops: the task stays as it was (not failed),
// so that after the restart the client can resubscribe, or answer, and go on.
var errShuttingDown = errors.New("parley is shutting down")

// a2aHandler is the SDK's request handler, with resubscribe able to follow a task that no
// execution in memory holds any more: after a restart, its conversation is in SQLite.
type a2aHandler struct {
	a2asrv.RequestHandler
	x *a2aExecutor
}

// OnResubscribeToTask implements a2asrv.RequestHandler.
func (h a2aHandler) OnResubscribeToTask(ctx context.Context, params *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		first := true
		for ev, err := range h.RequestHandler.OnResubscribeToTask(ctx, params) {
			if first && errors.Is(err, a2a.ErrTaskNotFound) && params != nil {
				h.x.resubscribe(ctx, params.ID, yield)
				return
			}
			first = false
			if !yield(ev, err) {
				return
			}
		}
	}
}

// OnSendMessageStream implements a2asrv.RequestHandler. A message into a task whose last
// request is still winding up is refused by the SDK ("execution already in progress"); it is
// tried again for a moment instead of failing the client.
func (h a2aHandler) OnSendMessageStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for attempt := 1; ; attempt++ {
			busy := false
			first := true
			for ev, err := range h.RequestHandler.OnSendMessageStream(ctx, params) {
				if first && err != nil && attempt < busyTries && strings.Contains(err.Error(), "already in progress") {
					busy = true
					break
				}
				first = false
				if !yield(ev, err) {
					return
				}
			}
			if !busy {
				return
			}
			select {
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			case <-time.After(time.Duration(attempt) * 25 * time.Millisecond):
			}
		}
	}
}

// busyTries bounds the tries of a message sent while its task is still busy.
const busyTries = 12

// resubscribe follows a stored task's conversation: a waiting one asks again, a finished one
// sends its result, an interrupted one is run again, and a running one is followed.
func (x *a2aExecutor) resubscribe(ctx context.Context, id a2a.TaskID, yield func(a2a.Event, error) bool) {
	raw, convID, err := x.s.db.A2ATask(ctx, x.agent, string(id))
	var task a2a.Task
	if err != nil || convID == 0 || json.Unmarshal(raw, &task) != nil {
		yield(nil, a2a.ErrTaskNotFound)
		return
	}
	if task.Status.State.Terminal() {
		yield(&task, nil)
		return
	}
	rc := &a2asrv.RequestContext{TaskID: id, ContextID: task.ContextID, StoredTask: &task}
	q := &yieldQueue{yield: yield, save: func(st a2a.TaskStatus) {
		task.Status = st
		if b, err := json.Marshal(&task); err == nil {
			_ = x.s.db.SaveA2ATask(context.WithoutCancel(ctx), string(id), task.ContextID, x.agent, b)
		}
	}}
	conv, err := x.s.db.Conversation(ctx, convID)
	if err != nil {
		yield(nil, err)
		return
	}
	last, err := x.s.db.LastEventID(ctx, convID)
	if err != nil {
		yield(nil, err)
		return
	}
	switch conv.State {
	case agent.StateWaiting:
		pending, _ := x.s.db.PendingQuestions(ctx, convID)
		if len(pending) > 0 {
			if rec, err := x.s.db.Question(ctx, pending[0]); err == nil {
				_ = x.ask(ctx, rc, q, rec.Question, nil)
				return
			}
		}
	case agent.StateDone:
		_ = x.complete(ctx, rc, q, x.lastAgentText(ctx, convID))
		return
	case agent.StateInterrupted, agent.StateFailed:
		if err := x.s.runner.Retry(ctx, convID); err != nil {
			_ = x.fail(ctx, rc, q, agent.ErrorMessage(err))
			return
		}
	}
	if err := x.follow(ctx, rc, q, convID, last); err != nil && !errors.Is(err, errShuttingDown) {
		yield(nil, err)
	}
}

// lastAgentText is the newest finished agent message of the conversation.
func (x *a2aExecutor) lastAgentText(ctx context.Context, convID int64) string {
	evs, err := x.s.db.Events(ctx, convID, 0)
	if err != nil {
		return ""
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == agent.EventAgentMessage {
			return evs[i].Text
		}
	}
	return ""
}

// yieldQueue hands events written by the executor's helpers straight to a resubscribed client,
// keeping the stored task's status up to date.
type yieldQueue struct {
	yield func(a2a.Event, error) bool
	save  func(a2a.TaskStatus)
	done  bool
}

func (q *yieldQueue) Write(ctx context.Context, ev a2a.Event) error {
	if q.done {
		return context.Canceled
	}
	if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
		q.save(s.Status)
	}
	if !q.yield(ev, nil) {
		q.done = true
		return context.Canceled
	}
	return nil
}

func (q *yieldQueue) Read(context.Context) (a2a.Event, error) {
	return nil, errors.New("write-only queue")
}

func (q *yieldQueue) Close() error { return nil }
