package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
)

// Execute handles one message of an A2A client.
func (x *executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	text, values := messageContent(rc.Message)
	files, err := x.s.messageFiles(rc.Message)
	if err != nil {
		return x.fail(ctx, rc, q, domain.ErrorMessage(err))
	}
	convID, err := x.conversation(ctx, rc)
	if err != nil {
		return err
	}
	// A stream starts with the task as it stands (v1.0 clients expect it first): a new one
	// submitted with the client's message, or the one the message goes on.
	first := &a2a.Task{ID: rc.TaskID, ContextID: rc.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}, History: []*a2a.Message{rc.Message}}
	if rc.StoredTask != nil {
		// Its message is being taken in: the task works (a task that waits would end the stream).
		t := *rc.StoredTask
		t.Status = a2a.TaskStatus{State: a2a.TaskStateWorking}
		first = &t
	}
	var start int64
	fresh := convID == 0
	if fresh && strings.TrimSpace(text) == "" && len(files) == 0 {
		if err := q.Write(ctx, first); err != nil {
			return err
		}
		return x.fail(ctx, rc, q, "Send a message with a text part.")
	}
	if fresh {
		conv, err := x.s.db.CreateConversation(ctx, x.s.user.ID, x.agent, domain.Title(text), rc.Message.ID)
		if err != nil {
			return err
		}
		convID = conv.ID
	} else if start, err = x.s.db.LastEventID(ctx, convID); err != nil {
		return err
	}
	// The task is the client's, linked before the client learns its id (from the first event)
	// and before the agent starts, so that a get, a cancel or a resubscription always finds it.
	if err := x.s.db.LinkA2ATask(ctx, string(rc.TaskID), rc.ContextID, x.agent, clientOf(ctx), convID); err != nil {
		return err
	}
	if err := q.Write(ctx, first); err != nil {
		return err
	}
	if fresh {
		if _, err := x.s.runner.Send(ctx, convID, domain.Message{Text: text, Author: Person, UserID: x.s.user.ID, Nonce: rc.Message.ID, Files: files, Interrupt: true}); err != nil {
			return x.fail(ctx, rc, q, domain.ErrorMessage(err))
		}
	} else if done, err := x.reply(ctx, rc, q, convID, text, values, files); done || err != nil {
		return err
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	return x.follow(ctx, rc, q, convID, start, "")
}

// conversation finds the conversation of the client's task, or of its context, 0 when it is
// new.
func (x *executor) conversation(ctx context.Context, rc *a2asrv.RequestContext) (int64, error) {
	client := clientOf(ctx).ID
	t, err := x.s.db.A2ATask(ctx, x.agent, client, string(rc.TaskID))
	if err == nil {
		return t.ConversationID, nil
	}
	if domain.ErrorCode(err) != domain.ENOTFOUND {
		return 0, err
	}
	return x.s.db.A2AContextConversation(ctx, x.agent, client, rc.ContextID)
}

// actor is who answers over A2A: the client, named on the answer and in the audit log, for
// the a2a account, whose conversations its tasks are.
func (x *executor) actor(ctx context.Context) domain.Actor {
	return domain.Actor{Name: Person, UserID: x.s.user.ID, Via: clientOf(ctx).Via()}
}

// reply takes a message into a running conversation: the answer to its pending question, or
// a new message. done is true when the request ended here (an invalid answer, asked again).
func (x *executor) reply(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, convID int64, text string, values map[string]any, files []domain.File) (bool, error) {
	pending, err := x.s.db.PendingQuestions(ctx, convID)
	if err != nil {
		return true, err
	}
	if len(pending) == 0 {
		if _, err := x.s.runner.Send(ctx, convID, domain.Message{Text: text, Author: Person, UserID: x.s.user.ID, Nonce: rc.Message.ID, Files: files, Interrupt: true}); err != nil {
			return true, x.fail(ctx, rc, q, domain.ErrorMessage(err))
		}
		return false, nil
	}
	rec, err := x.s.db.Question(ctx, pending[0])
	if err != nil {
		return true, err
	}
	if rec.Routed() {
		// Not the client's to answer: its approvers decide it, and the task works on.
		e := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc,
			a2a.TextPart{Text: waitingFor(rec.Question) + " The task goes on once they have; follow it with tasks/resubscribe."}))
		e.Final = true
		return true, q.Write(ctx, e)
	}
	if declined, reason := declineOf(values); declined {
		_, err := x.s.runner.Decline(ctx, rec, reason, x.actor(ctx))
		return false, err
	}
	answerFiles := fileAnswers(rec.Question, files)
	if len(values) == 0 && len(answerFiles) == 0 {
		values = textValues(rec.Question, text)
	}
	if len(values) == 0 && len(answerFiles) == 0 && (len(rec.Question.Fields) != 1 || len(files) > 0) {
		// Not an answer: a new message, which supersedes the question, as in the browser.
		if _, err := x.s.runner.Send(ctx, convID, domain.Message{Text: text, Author: Person, UserID: x.s.user.ID, Nonce: rc.Message.ID, Files: files, Interrupt: true}); err != nil {
			return true, x.fail(ctx, rc, q, domain.ErrorMessage(err))
		}
		return false, nil
	}
	form := answerForm(rec.Question, text, values)
	_, err = x.s.runner.Answer(ctx, rec, form, answerFiles, x.actor(ctx))
	var ferrs domain.FieldErrors
	if errors.As(err, &ferrs) {
		// Asked again, naming the fields to fix.
		return true, x.ask(ctx, rc, q, rec.Question, ferrs)
	}
	if err != nil && domain.ErrorCode(err) != domain.ECONFLICT {
		return true, x.fail(ctx, rc, q, domain.ErrorMessage(err))
	}
	return false, nil
}

// chunkEvery is how often a streaming reply sends a partial_result chunk at most.
const chunkEvery = 100 * time.Millisecond

// follow translates the conversation after event after until the agent asks or ends: its
// text as partial_result artifact chunks (live, through the hub, coalesced to one chunk at
// most every chunkEvery; the last one, sent before the task asks or ends, has lastChunk),
// its question as input-required, its end as final_result. replied is the agent's text of
// this turn before event after, sent first and part of the final result.
func (x *executor) follow(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, convID, after int64, replied string) error {
	f := x.s.runner.Hub().Follow(convID)
	defer f.Close()
	t := &runner.Tail{Cur: runner.Cursor{Event: after}}
	var artifact a2a.ArtifactID
	var final, pending strings.Builder
	var sentAt time.Time
	// send sends what is pending as one chunk; last marks the artifact's end.
	send := func(last bool) error {
		if pending.Len() == 0 && (!last || artifact == "") {
			return nil
		}
		var e *a2a.TaskArtifactUpdateEvent
		if artifact == "" {
			e = a2a.NewArtifactEvent(rc, a2a.TextPart{Text: pending.String()})
			artifact = e.Artifact.ID
		} else {
			e = a2a.NewArtifactUpdateEvent(rc, artifact, a2a.TextPart{Text: pending.String()})
		}
		// Every chunk is named: clients that look at each event's name keep them all.
		e.Artifact.Name = "partial_result"
		e.LastChunk = last
		pending.Reset()
		sentAt = time.Now()
		return q.Write(ctx, e)
	}
	// chunk adds a piece of the reply; a new message is set apart from the one before.
	chunk := func(delta string, start bool) error {
		if delta == "" {
			return nil
		}
		if start && final.Len() > 0 {
			delta = "\n\n" + delta
		}
		final.WriteString(delta)
		pending.WriteString(delta)
		if time.Since(sentAt) < chunkEvery {
			return nil
		}
		return send(false)
	}
	if err := chunk(replied, true); err != nil {
		return err
	}
	// event handles one committed event; errEnded (or the error it ended with) ends the
	// request with it.
	event := func(ev domain.Event) error {
		t.Cur.Event = ev.ID
		switch ev.Kind {
		case domain.EventAgentMessage:
			streamed, sent := ev.MessageID == t.Cur.Message, t.Cur.Bytes
			t.Cur.Message, t.Cur.Bytes = "", 0
			if !streamed {
				return chunk(ev.Text, true)
			}
			if sent <= len(ev.Text) {
				return chunk(ev.Text[sent:], false) // what came after the last chunk
			}
		case domain.EventQuestionAsked:
			rec, err := x.s.db.Question(ctx, ev.Question.ID)
			if err != nil {
				return ended(err)
			}
			if rec.Pending() && rec.Routed() {
				// Others decide it (the agent's approvers): the task works on meanwhile, and
				// says whom it waits for.
				if err := send(true); err != nil {
					return ended(err)
				}
				e := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: waitingFor(rec.Question)}))
				if err := q.Write(ctx, e); err != nil {
					return ended(err)
				}
			} else if rec.Pending() {
				if err := send(true); err != nil {
					return ended(err)
				}
				return ended(x.ask(ctx, rc, q, rec.Question, nil))
			}
		case domain.EventRunState:
			if ev.State != domain.StateRunning {
				if err := send(true); err != nil {
					return ended(err)
				}
			}
			switch ev.State {
			case domain.StateDone:
				return ended(x.complete(ctx, rc, q, final.String()))
			case domain.StateFailed, domain.StateInterrupted, domain.StateStopped:
				if _, cancelling := x.cancelling.Load(rc.TaskID); cancelling {
					return errEnded // Cancel reports the end of this task
				}
				return ended(x.fail(ctx, rc, q, ev.Error))
			}
		}
		return nil
	}
	// live sends the message being written, from where the last chunk left it.
	live := func(m runner.LiveText) error {
		start := m.ID != t.Cur.Message
		t.Cur.Message = m.ID
		if err := chunk(string(m.Text), start); err != nil {
			return err
		}
		t.Cur.Bytes = m.From + len(m.Text)
		return nil
	}
	for {
		if err := f.CatchUp(ctx, x.s.db, t, readerFuncs{event, live}); err != nil {
			if errors.Is(err, errEnded) {
				return nil
			}
			return err
		}
		var tick <-chan time.Time
		if pending.Len() > 0 {
			tick = time.After(chunkEvery - time.Since(sentAt))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			if err := send(false); err != nil {
				return err
			}
		case <-x.s.closed.Done():
			if err := send(false); err != nil {
				return err
			}
			// The stream ends with a status the client can act on, never an empty result.
			e := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: shutdownNote}))
			e.Final = true
			return q.Write(context.WithoutCancel(ctx), e)
		case <-f.Wake():
		}
	}
}

// errEnded ends following a conversation: the request is over (the task asked, ended, or
// another request reports its end).
var errEnded = errors.New("the request ended")

// ended is the error a request ended with, errEnded when none.
func ended(err error) error {
	if err == nil {
		return errEnded
	}
	return err
}

// readerFuncs is an runner.Reader made of two functions.
type readerFuncs struct {
	event func(domain.Event) error
	live  func(runner.LiveText) error
}

func (r readerFuncs) Event(ev domain.Event) error  { return r.event(ev) }
func (r readerFuncs) Live(m runner.LiveText) error { return r.live(m) }

// ask ends the request in input-required, with the question as a DataPart (metadata.input_fields)
// and as UserInputMetaData text for agents that read only text.
func (x *executor) ask(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, question domain.Question, ferrs domain.FieldErrors) error {
	msg, err := askMessage(rc, question, ferrs)
	if err != nil {
		return err
	}
	e := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateInputRequired, msg)
	e.Final = true
	return q.Write(ctx, e)
}

// askMessage is the agent's message that asks question: the fields to fix first, if any.
func askMessage(task a2a.TaskInfoProvider, question domain.Question, ferrs domain.FieldErrors) (*a2a.Message, error) {
	content := question.Message
	if len(ferrs) > 0 {
		content = "Some answers need fixing: " + ferrs.Error() + "\n\n" + content
	}
	shown := question
	shown.Message = content
	text := domain.FormatUserInputMetaData(shown)
	// The DataPart carries the same JSON as the text, so both read alike; bad fields say why.
	var data map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(text, domain.UserInputMetaDataPrefix))), &data); err != nil {
		return nil, err
	}
	data["is_task_complete"] = false
	if meta, ok := data["metadata"].(map[string]any); ok {
		meta["question_id"] = question.ID
		if fields, ok := meta["input_fields"].([]any); ok {
			for _, f := range fields {
				if m, ok := f.(map[string]any); ok {
					if msg := ferrs[fmt.Sprint(m["name"])]; msg != "" {
						m["error"] = msg
					}
				}
			}
		}
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, task, a2a.DataPart{Data: data}, a2a.TextPart{Text: text}), nil
}

// complete sends the final_result artifact, then the completed state: a completed task never
// ends on a partial_result.
func (x *executor) complete(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, text string) error {
	e := a2a.NewArtifactEvent(rc, x.resultPart(text))
	e.Artifact.Name = "final_result"
	if err := q.Write(ctx, e); err != nil {
		return err
	}
	done := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCompleted, nil)
	done.Final = true
	return q.Write(ctx, done)
}

// resultPart is the reply as the final result: text, or a DataPart {is_task_complete, ...}.
func (x *executor) resultPart(text string) a2a.Part {
	if x.s.opts.StructuredOutput {
		return a2a.DataPart{Data: map[string]any{"is_task_complete": true, "require_user_input": false, "content": text, "metadata": map[string]any{}}}
	}
	return a2a.TextPart{Text: text}
}

func (x *executor) fail(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, why string) error {
	e := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateFailed, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: why}))
	e.Final = true
	return q.Write(ctx, e)
}

// Cancel stops the agent if it is working and withdraws the task's pending questions, so the
// agent learns of it; the conversation's log then says the task was cancelled.
func (x *executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if t, err := x.s.db.A2ATask(ctx, x.agent, clientOf(ctx).ID, string(rc.TaskID)); err == nil {
		if err := x.s.db.Audit(ctx, clientOf(ctx).Via(), "cancel a2a task", t.ConversationID, "task "+string(rc.TaskID)); err != nil {
			return err
		}
		x.cancelling.Store(rc.TaskID, true)
		x.s.runner.StopReply(ctx, t.ConversationID)
		if pending, err := x.s.db.PendingQuestions(ctx, t.ConversationID); err == nil && len(pending) > 0 {
			if _, err := x.s.runner.Withdraw(ctx, pending[0], x.actor(ctx)); err != nil && domain.ErrorCode(err) != domain.ECONFLICT {
				return err
			}
		}
	}
	e := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	e.Final = true
	return q.Write(ctx, e)
}

// waitingFor says whom a question routed to others waits for.
func waitingFor(q domain.Question) string {
	return "Waiting for " + q.Audience().Words() + " to decide: " + strings.SplitN(q.Message, "\n", 2)[0]
}
