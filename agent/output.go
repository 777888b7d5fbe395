package agent

import (
	"context"
	"fmt"
	"strings"
)

// stepOutput stores what an agent reports during one step, notifying after each write.
type stepOutput struct {
	r      *Runner
	ctx    context.Context
	in     StepInput
	author string

	seq     int
	msgID   string
	text    strings.Builder
	holding bool // the message may be a UserInputMetaData form: hold it back until it ends
}

func newStepOutput(r *Runner, ctx context.Context, in StepInput, author string) *stepOutput {
	return &stepOutput{r: r, ctx: ctx, in: in, author: author}
}

func (o *stepOutput) append(ev Event) error {
	ev.ConversationID, ev.RunID = o.in.ConversationID, o.in.RunID
	if _, err := o.r.ledger.AppendEvent(o.ctx, ev); err != nil {
		return err
	}
	o.r.notify(o.in.ConversationID)
	return nil
}

// Text appends to the current message, starting one if needed.
func (o *stepOutput) Text(delta string) error {
	if delta == "" {
		return nil
	}
	start := o.msgID == ""
	if start {
		o.seq++
		o.msgID = fmt.Sprintf("%d-%d", o.in.StepID, o.seq)
		o.holding = true
	}
	o.text.WriteString(delta)
	if o.holding {
		if StartsWithUserInputMetaData(o.text.String()) {
			return nil
		}
		// Not a form after all: release what was held as the message's first delta.
		o.holding = false
		return o.append(Event{Kind: EventTextDelta, MessageID: o.msgID, Start: true, Text: o.text.String(), Author: o.author})
	}
	return o.append(Event{Kind: EventTextDelta, MessageID: o.msgID, Text: delta, Author: o.author})
}

// EndMessage finishes the current message. A UserInputMetaData form in it (held back while
// streaming when it opens the message) becomes a question; the text around the form stays.
func (o *stepOutput) EndMessage() error {
	if o.msgID == "" {
		return nil
	}
	id, text, held := o.msgID, o.text.String(), o.holding
	o.msgID, o.holding = "", false
	o.text.Reset()
	q, before, after, ok := SplitUserInputMetaData(text)
	if !ok {
		if held && strings.TrimSpace(text) == "" {
			return nil
		}
		return o.append(Event{Kind: EventAgentMessage, MessageID: id, Start: held, Text: text, Author: o.author})
	}
	if before != "" || !held {
		// What streamed before the form stays; the form's JSON does not.
		if err := o.append(Event{Kind: EventAgentMessage, MessageID: id, Start: held, Text: before, Author: o.author}); err != nil {
			return err
		}
	}
	if q.Asker == "" {
		q.Asker = o.author
	}
	if _, err := o.Ask(q); err != nil {
		return err
	}
	if after == "" {
		return nil
	}
	o.seq++
	return o.append(Event{Kind: EventAgentMessage, MessageID: fmt.Sprintf("%d-%d", o.in.StepID, o.seq), Start: true, Text: after, Author: o.author})
}

// interrupt keeps text held back for a possible form when the step is cut off, so that the
// partial message survives like any other.
func (o *stepOutput) interrupt() {
	if o.msgID != "" && o.holding && strings.TrimSpace(o.text.String()) != "" {
		o.holding = false
		_ = o.append(Event{Kind: EventTextDelta, MessageID: o.msgID, Start: true, Text: o.text.String(), Author: o.author})
	}
}

// As sets who speaks in the messages that follow.
func (o *stepOutput) As(author string) {
	if author != o.author {
		_ = o.EndMessage()
		o.author = author
	}
}

// Plan publishes the agent's current execution plan.
func (o *stepOutput) Plan(p Plan) error {
	return o.append(Event{Kind: EventPlan, Plan: &p, Author: o.author})
}

// Ask stores a pending question. Fields that would collect secrets are refused first.
func (o *stepOutput) Ask(q Question) (int64, error) {
	if err := o.EndMessage(); err != nil {
		return 0, err
	}
	if q.Asker == "" {
		q.Asker = o.author
	}
	q = RefuseSecrets(q)
	if err := q.Check(); err != nil {
		return 0, fmt.Errorf("the agent asked an invalid question: %w", err)
	}
	rec, err := o.r.ledger.AskQuestion(o.ctx, o.in.RunID, q)
	if err != nil {
		return 0, err
	}
	o.r.notify(o.in.ConversationID)
	if !q.Deadline.IsZero() {
		o.r.wakeDeadlines()
	}
	return rec.ID, nil
}

// Checkpoint stores the agent's own state for its next step.
func (o *stepOutput) Checkpoint(state any) error {
	b, err := jsonMarshal(state)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return o.append(Event{Kind: EventCheckpoint, Checkpoint: b})
}
