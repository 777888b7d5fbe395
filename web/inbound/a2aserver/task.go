package a2aserver

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/parley-chat/parley/domain"
)

// shutdownNote is the last status a stream gets when Parley stops under it.
const shutdownNote = "Parley is restarting. The task goes on: resubscribe to it (tasks/resubscribe, SubscribeToTask) to follow it."

// taskStore gives the SDK the tasks as the conversations' logs tell them: nothing of a task
// is stored but its link to its conversation, so nothing can drift from the conversation.
type taskStore struct{ x *executor }

// Save implements a2asrv.TaskStore. The SDK saves the task after each event; the
// conversation's log holds all of it already.
func (t *taskStore) Save(context.Context, *a2a.Task) error { return nil }

// Get implements a2asrv.TaskStore.
func (t *taskStore) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	r, err := t.x.task(ctx, id)
	return r.task, err
}

// taskRead is a task as its conversation's log told it, up to the event last: what a
// resubscription sends first, then follows the log from.
type taskRead struct {
	task *a2a.Task
	span domain.A2ATask
	last int64
	// reply is the agent's text of the task's current turn so far.
	reply string
}

// task reads a task from its conversation's log: its state, its status message (the question
// it waits on, the error it failed with), its result and its history.
func (x *executor) task(ctx context.Context, id a2a.TaskID) (taskRead, error) {
	span, err := x.s.db.A2ATask(ctx, x.agent, clientOf(ctx).ID, string(id))
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return taskRead{}, a2a.ErrTaskNotFound
	}
	if err != nil {
		return taskRead{}, err
	}
	evs, err := x.s.db.Events(ctx, span.ConversationID, 0)
	if err != nil {
		return taskRead{}, err
	}
	last := span.From
	task := &a2a.Task{ID: id, ContextID: span.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	var reply []string
	var pending *domain.Question
	// The status is the newest run state's, with the question pending then: made once, after.
	var state *domain.Event
	var pendingThen *domain.Question
	withdrawn := false
	for _, ev := range evs {
		if span.Until != 0 && ev.ID > span.Until {
			break
		}
		last = ev.ID
		mine := ev.ID > span.From
		switch ev.Kind {
		case domain.EventUserMessage:
			task.History = append(task.History, historyMessage(task, a2a.MessageRoleUser, ev.Text))
			if mine {
				reply = nil
			}
		case domain.EventAgentMessage:
			if ev.Interrupted || strings.TrimSpace(ev.Text) == "" {
				continue
			}
			task.History = append(task.History, historyMessage(task, a2a.MessageRoleAgent, ev.Text))
			if mine {
				reply = append(reply, ev.Text)
			}
		}
		if !mine {
			continue
		}
		switch ev.Kind {
		case domain.EventQuestionAsked:
			pending = ev.Question
		case domain.EventQuestionResolved:
			pending = nil
			if r := ev.Resolution; r != nil && r.Outcome == domain.Cancelled && r.By == Person {
				withdrawn = true
			}
		case domain.EventRunState:
			state, pendingThen = &ev, pending
		}
	}
	if state != nil {
		task.Status = x.status(task, *state, pendingThen)
		task.Status.Timestamp = timestamp(state.At)
	}
	switch {
	case withdrawn && task.Status.State != a2a.TaskStateFailed:
		task.Status.State, task.Status.Message = a2a.TaskStateCanceled, nil
	case span.Until != 0 && !task.Status.State.Terminal():
		// A newer task of the same context took the conversation over.
		task.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: task.Status.Timestamp,
			Message: historyMessage(task, a2a.MessageRoleAgent, "A newer task of the same context took this one over.")}
	}
	if task.Status.State == a2a.TaskStateCompleted {
		task.Artifacts = []*a2a.Artifact{{ID: a2a.ArtifactID(string(id) + "-result"), Name: "final_result",
			Parts: a2a.ContentParts{x.resultPart(strings.Join(reply, "\n\n"))}}}
	}
	return taskRead{task: task, span: span, last: last, reply: strings.Join(reply, "\n\n")}, nil
}

// status is the task's status as one run-state event of its conversation leaves it.
func (x *executor) status(task *a2a.Task, ev domain.Event, pending *domain.Question) a2a.TaskStatus {
	switch ev.State {
	case domain.StateWaiting:
		if pending != nil && pending.Routed() {
			return a2a.TaskStatus{State: a2a.TaskStateWorking, Message: historyMessage(task, a2a.MessageRoleAgent, waitingFor(*pending))}
		}
		if pending != nil {
			if msg, err := askMessage(task, *pending, nil); err == nil {
				return a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: msg}
			}
		}
		return a2a.TaskStatus{State: a2a.TaskStateInputRequired}
	case domain.StateDone:
		return a2a.TaskStatus{State: a2a.TaskStateCompleted}
	case domain.StateFailed:
		return a2a.TaskStatus{State: a2a.TaskStateFailed, Message: historyMessage(task, a2a.MessageRoleAgent, ev.Error)}
	case domain.StateStopped:
		return a2a.TaskStatus{State: a2a.TaskStateCanceled}
	}
	// Running, or interrupted by a stop or a crash: Start takes interrupted tasks up again.
	return a2a.TaskStatus{State: a2a.TaskStateWorking}
}

func historyMessage(task *a2a.Task, role a2a.MessageRole, text string) *a2a.Message {
	return a2a.NewMessageForTask(role, task, a2a.TextPart{Text: text})
}

func timestamp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// handler is the SDK's request handler, with resubscribe able to follow a task that no
// execution in memory holds any more: after a restart, its conversation is in SQLite.
type handler struct {
	a2asrv.RequestHandler
	x *executor
}

// OnResubscribeToTask implements a2asrv.RequestHandler. Another client's task is not found,
// even while an execution in memory holds it; the stream ends when the client is revoked.
func (h handler) OnResubscribeToTask(ctx context.Context, params *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return h.x.s.untilRevoked(ctx, func(ctx context.Context) iter.Seq2[a2a.Event, error] { return h.resubscribe(ctx, params) })
}

func (h handler) resubscribe(ctx context.Context, params *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if params == nil {
			yield(nil, a2a.ErrInvalidParams)
			return
		}
		if err := h.x.owns(ctx, params.ID); err != nil {
			yield(nil, err)
			return
		}
		first := true
		for ev, err := range h.RequestHandler.OnResubscribeToTask(ctx, params) {
			if first && errors.Is(err, a2a.ErrTaskNotFound) {
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

// OnSendMessageStream implements a2asrv.RequestHandler. A message into another client's task
// finds no task. A message into a task whose last request is still winding up is refused by
// the SDK ("execution already in progress"); it is tried again for a moment instead of
// failing the client. The stream ends when the client is revoked.
func (h handler) OnSendMessageStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return h.x.s.untilRevoked(ctx, func(ctx context.Context) iter.Seq2[a2a.Event, error] { return h.sendStream(ctx, params) })
}

func (h handler) sendStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if params != nil && params.Message != nil && params.Message.TaskID != "" {
			if err := h.x.owns(ctx, params.Message.TaskID); err != nil {
				yield(nil, err)
				return
			}
		}
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

// resubscribe follows a task no execution holds: it sends the task as its conversation's log
// tells it, then, while the agent works, follows the conversation as a message stream does,
// from the very event the task was read up to (what the agent said of this turn so far comes
// first), so that nothing committed in between is lost.
func (x *executor) resubscribe(ctx context.Context, id a2a.TaskID, yield func(a2a.Event, error) bool) {
	r, err := x.task(ctx, id)
	if err != nil {
		yield(nil, err)
		return
	}
	if !yield(r.task, nil) || r.task.Status.State != a2a.TaskStateWorking {
		return
	}
	rc := &a2asrv.RequestContext{TaskID: id, ContextID: r.task.ContextID, StoredTask: r.task}
	if err := x.follow(ctx, rc, &yieldQueue{yield: yield}, r.span.ConversationID, r.last, r.reply); err != nil && !errors.Is(err, context.Canceled) {
		yield(nil, err)
	}
}

// yieldQueue hands events written by the executor's helpers straight to a resubscribed client.
type yieldQueue struct {
	yield func(a2a.Event, error) bool
	done  bool
}

func (q *yieldQueue) Write(ctx context.Context, ev a2a.Event) error {
	if q.done {
		return context.Canceled
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
