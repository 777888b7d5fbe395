package agent

import (
	"context"
	"fmt"
	"strings"
	"unicode"
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

const metadataPrefix = "UserInputMetaData:"

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
		sofar := strings.TrimLeftFunc(o.text.String(), unicode.IsSpace)
		if sofar == "" || strings.HasPrefix(metadataPrefix, sofar) || strings.HasPrefix(sofar, metadataPrefix) {
			return nil
		}
		// Not a form after all: release what was held as the message's first delta.
		o.holding = false
		return o.append(Event{Kind: EventTextDelta, MessageID: o.msgID, Start: true, Text: o.text.String(), Author: o.author})
	}
	return o.append(Event{Kind: EventTextDelta, MessageID: o.msgID, Text: delta, Author: o.author})
}

// EndMessage finishes the current message; a held UserInputMetaData message becomes a question.
func (o *stepOutput) EndMessage() error {
	if o.msgID == "" {
		return nil
	}
	id, text, held := o.msgID, o.text.String(), o.holding
	o.msgID, o.holding = "", false
	o.text.Reset()
	if held {
		if q, ok := ParseUserInputMetaData(text); ok {
			if q.Asker == "" {
				q.Asker = o.author
			}
			_, err := o.Ask(q)
			return err
		}
		if strings.TrimSpace(text) == "" {
			return nil
		}
	}
	return o.append(Event{Kind: EventAgentMessage, MessageID: id, Start: held, Text: text, Author: o.author})
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
