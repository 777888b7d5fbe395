package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// Step continues the conversation with the remote agent, deciding from the log what is due:
//
//   - a new message from the person goes into the task when it waits for input (or sign-in),
//     otherwise it starts a new task in the same context; the agent is told its intent, the
//     person's language and its documents, which go along as file parts (see messageParts);
//   - a resolved question goes back into its task: answers as a DataPart plus a short text,
//     a decline (or expiry) as a message saying so, a cancel as tasks/cancel;
//   - a task still working (after a fault, a restart or a re-delivered step) is caught up
//     with tasks/get and followed again with tasks/resubscribe;
//   - a Retry with nothing else to do sends the person's last message again.
//
// Faults are returned as errors naming the agent; the text shown so far is kept.
func (a *Agent) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	p := readPast(in.History)
	s := newSession(a, c, in, out, p.cp)
	err = s.step(ctx, p)
	if ctx.Err() == nil {
		// A result still arriving when the stream ended or broke is shown as it stands.
		if ferr := s.flushFinal(); err == nil {
			err = ferr
		}
	}
	if err == nil {
		if err = s.w.end(); err == nil {
			err = s.finishPlan(domain.StepDone)
		}
		return err
	}
	if ctx.Err() != nil {
		// Cut off: the runner keeps the partial text. When the person stopped the reply, the
		// remote task is cancelled too; after a shutdown it goes on, and is caught up with.
		_ = s.w.flush()
		if errors.Is(context.Cause(ctx), domain.ErrStopped) {
			s.stopTask()
		}
		return ctx.Err()
	}
	_ = s.finishPlan(domain.StepFailed)
	_ = s.w.end()
	var ce *callError
	if !domain.IsFault(err) && errors.As(err, &ce) {
		return a.callFault(ce)
	}
	return err
}

func (s *session) step(ctx context.Context, p past) error {
	switch {
	case s.in.Trigger == domain.TriggerMessage && len(p.unsent()) > 0:
		return s.sendText(ctx, p)
	case p.undelivered():
		return s.deliver(ctx, p.question, p.resolution)
	case s.cp.live():
		return s.catchUp(ctx)
	case len(p.unsent()) > 0:
		return s.sendText(ctx, p)
	case s.in.Trigger == domain.TriggerRetry && len(p.users) > 0:
		// A Retry after the task ended (failed, say): ask again, in a new task.
		parts, err := s.messageParts(ctx, p.users[len(p.users)-1:])
		if err != nil {
			return err
		}
		return s.send(ctx, false, parts...)
	}
	// Nothing is due: a re-delivered step whose work was done already.
	return nil
}

// sendText sends the person's messages the agent has not accepted yet, with their documents.
func (s *session) sendText(ctx context.Context, p past) error {
	parts, err := s.messageParts(ctx, p.unsent())
	if err != nil {
		return err
	}
	n := len(p.users)
	s.onAccept = func() { s.cp.Sent = n }
	return s.send(ctx, s.cp.waitsForInput(), parts...)
}

// send streams a message into the checkpoint's task (into) or into its context as a new
// task. A task that ended in between is not an error: the message then starts a new task in
// the same context, and the person is told.
func (s *session) send(ctx context.Context, into bool, parts ...sdk.Part) error {
	err := s.stream(ctx, parts, into)
	var ce *callError
	if !into || !errors.As(err, &ce) || ce.events > 0 || ce.rpcCode() == 0 {
		return err
	}
	state, ended := s.ended(ctx)
	if !ended {
		return err
	}
	s.cp.State = state
	if err := s.w.text(fmt.Sprintf("_(The agent's task had already ended (%s), so Parley sent this as a new request in the same conversation.)_", state)); err != nil {
		return err
	}
	if err := s.w.end(); err != nil {
		return err
	}
	return s.stream(ctx, parts, false)
}

// stream sends one message and follows the stream it opens; one into a task is retried
// while the task is busy (see retryBusy).
func (s *session) stream(ctx context.Context, parts []sdk.Part, into bool) error {
	if !into {
		return s.streamOnce(ctx, parts, false)
	}
	return retryBusy(ctx, func() error { return s.streamOnce(ctx, parts, true) })
}

// retryBusy runs a call about a task again, after a short and growing wait, while the agent
// refuses it because it is still winding up the task's last request: a2a-go servers answer
// that with an internal error ("execution already in progress"), before any event. Messages
// into the task and tasks/cancel both meet it.
func retryBusy(ctx context.Context, call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		var ce *callError
		if attempt >= busyRetries || !errors.As(err, &ce) || ce.rpcCode() != -32603 || ce.events > 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// busyRetries bounds the tries of a call refused because the task is still busy.
const busyRetries = 8

func (s *session) streamOnce(ctx context.Context, parts []sdk.Part, into bool) error {
	s.sends++
	msg := &sdk.Message{ID: fmt.Sprintf("parley-%d-%d-%d", s.in.ConversationID, s.in.StepID, s.sends), Role: sdk.MessageRoleUser, Parts: parts, ContextID: s.cp.ContextID}
	if into {
		msg.TaskID = s.cp.TaskID
	}
	s.replying = into
	if s.in.Language != "" {
		msg.Metadata = map[string]any{languageKey: s.in.Language}
	}
	return s.run(ctx, "message/stream", func(ctx context.Context) iter.Seq2[sdk.Event, error] {
		return s.c.client.SendStreamingMessage(ctx, &sdk.MessageSendParams{Message: msg})
	})
}

// ended asks the agent whether the checkpoint's task has ended; state is how.
func (s *session) ended(ctx context.Context) (sdk.TaskState, bool) {
	t, err := s.getTask(ctx)
	var ce *callError
	switch {
	case errors.As(err, &ce) && ce.rpcCode() == codeTaskNotFound:
		return stateLost, true
	case err != nil:
		return "", false
	case t.Status.State.Terminal():
		return t.Status.State, true
	}
	return "", false
}

// stopTask cancels the task of a reply the person stopped (tasks/cancel), and keeps its state
// for the next step: a Retry then asks anew, in a new task. An agent that does not cancel is
// left to finish; a Retry catches up with it.
func (s *session) stopTask() {
	if !s.cp.live() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	t, err := s.c.client.CancelTask(ctx, &sdk.TaskIDParams{ID: s.cp.TaskID})
	if err != nil || t == nil {
		return
	}
	_ = s.track(t.Status.State)
}

// getTask reads the checkpoint's task.
func (s *session) getTask(ctx context.Context) (*sdk.Task, error) {
	cctx, w := withWatch(ctx)
	cctx, cancel := context.WithTimeout(cctx, callTimeout)
	defer cancel()
	// Parley never reads a task's history, which holds every message sent, documents
	// included: one message is the least servers agree on (0 means all to some).
	one := 1
	t, err := s.c.client.GetTask(cctx, &sdk.TaskQueryParams{ID: s.cp.TaskID, HistoryLength: &one})
	if err != nil {
		return nil, &callError{method: "tasks/get", w: w, err: err}
	}
	return t, nil
}

// catchUp shows what a task still working did since the conversation last saw it, then
// follows it to its end (or its next question).
func (s *session) catchUp(ctx context.Context) error {
	t, err := s.getTask(ctx)
	var ce *callError
	if errors.As(err, &ce) && ce.rpcCode() == codeTaskNotFound {
		s.cp.State = stateLost
		if err := s.save(); err != nil {
			return err
		}
		return s.a.faultf(err, "the agent no longer knows the task this conversation was following (it may have restarted); send a new message to start again")
	}
	if err != nil {
		return err
	}
	if err := s.handle(t); err != nil || s.done {
		return err
	}
	id := s.cp.TaskID
	err = s.run(ctx, "tasks/resubscribe", func(ctx context.Context) iter.Seq2[sdk.Event, error] {
		return s.c.client.ResubscribeToTask(ctx, &sdk.TaskIDParams{ID: id})
	})
	if !errors.As(err, &ce) || ce.events > 0 {
		return err
	}
	// The task finished between tasks/get and tasks/resubscribe: read its end.
	t, gerr := s.getTask(ctx)
	if gerr != nil {
		return err
	}
	if herr := s.handle(t); herr != nil || s.done {
		return herr
	}
	return err
}
