package domain

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Sink is where a step's output goes: the runner's stores events in the ledger and shows
// text live through the hub; backendtest's keeps them in memory. Both run behind the same
// StepOutput, so tests see exactly what the runner does with what an agent reports.
type Sink interface {
	// Live shows a piece of the message being written the moment it is written; the runner
	// stores it later, in a batch, and whole when the message ends.
	Live(msgID, author, delta string)
	// Store commits an event of the step: a finished message, a plan, a checkpoint.
	Store(ev Event) error
	// Ask stores a question, checked already, and returns its id.
	Ask(q Question) (int64, error)
	// Await waits for a live question's resolution; see Output.Await.
	Await(ctx context.Context, questionID int64) (Resolution, error)
}

// StepOutput is the Output of one step. It holds the message being written: a message that
// opens with a UserInputMetaData form is held back (not shown) until it ends, when the form
// becomes a question and the text around it stays. Text only ever reaches the sink's Live;
// a finished message is stored whole.
type StepOutput struct {
	sink   Sink
	stepID int64
	runID  int64

	// mu guards the message: the runner's flusher reads it while the agent writes.
	mu      sync.Mutex
	author  string
	seq     int
	msgID   string
	text    []byte
	holding bool
	lead    int // the white space the held text opens with, read so far
	live    int // how much of text went live: whole characters only
	saved   int // how much of text the flusher has taken

	// noForms keeps UserInputMetaData forms in the text as text; cancels offers Cancel on
	// every question (see Info).
	noForms, cancels bool
}

// NewStepOutput returns the output of step in, speaking as author until As says otherwise.
func NewStepOutput(in StepInput, author string, sink Sink) *StepOutput {
	return &StepOutput{sink: sink, stepID: in.StepID, runID: in.RunID, author: author}
}

// Follow applies what the agent's Info says about its questions: NoForms and Cancels.
// RunID is the run the step belongs to.
func (o *StepOutput) RunID() int64 { return o.runID }

func (o *StepOutput) Follow(info Info) {
	o.noForms, o.cancels = info.NoForms, info.Cancels
}

// Text appends to the current message, starting one if needed. Carriage returns become
// line feeds: a message's text has one kind of line end.
func (o *StepOutput) Text(delta string) error {
	if delta == "" {
		return nil
	}
	if strings.IndexByte(delta, '\r') >= 0 {
		delta = NormalizeNewlines(delta)
	}
	o.mu.Lock()
	if o.msgID == "" {
		o.seq++
		o.msgID = fmt.Sprintf("%d-%d", o.stepID, o.seq)
		o.holding = true
	}
	o.text = append(o.text, delta...)
	if o.holding {
		// Leading white space is read once, however many pieces it comes in.
		for o.lead < len(o.text) {
			r, n := utf8.DecodeRune(o.text[o.lead:])
			if !unicode.IsSpace(r) {
				break
			}
			o.lead += n
		}
		rest := o.text[o.lead:]
		opens, may := OpensUserInputMetaData(string(rest[:min(len(rest), len(UserInputMetaDataPrefix))]))
		if !o.noForms && (opens || may) {
			o.mu.Unlock()
			return nil
		}
		// Not a form after all: what was held goes out as the message's first piece.
		o.holding = false
	}
	// A character cut between two pieces goes out whole, with the second.
	end := len(o.text)
	for i := end - 1; i >= 0 && i >= end-utf8.UTFMax; i-- {
		if utf8.RuneStart(o.text[i]) {
			if !utf8.FullRune(o.text[i:end]) {
				end = i
			}
			break
		}
	}
	if end == o.live {
		o.mu.Unlock()
		return nil
	}
	piece := delta // the usual case: the piece is the delta, whole
	if o.live != len(o.text)-len(delta) || end != len(o.text) {
		piece = string(o.text[o.live:end])
	}
	o.live = end
	id, author := o.msgID, o.author
	o.mu.Unlock()
	o.sink.Live(id, author, piece)
	return nil
}

// take ends the current message for the caller: its id, text and whether it was held back.
func (o *StepOutput) take() (id, text string, held bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id, text, held = o.msgID, string(o.text), o.holding
	o.msgID, o.holding, o.text, o.live, o.saved, o.lead = "", false, nil, 0, 0, 0
	return id, text, held
}

// EndMessage finishes the current message. A UserInputMetaData form in it (held back while
// streaming when it opens the message) becomes a question; the text around the form stays.
func (o *StepOutput) EndMessage() error {
	id, text, held := o.take()
	if id == "" {
		return nil
	}
	q, before, after, ok := SplitUserInputMetaData(text)
	if !ok || o.noForms {
		if held && trimSpace(text) == "" {
			return nil
		}
		return o.sink.Store(Event{Kind: EventAgentMessage, MessageID: id, Text: text, Author: o.author})
	}
	if before != "" || !held {
		// What streamed before the form stays; the form's JSON does not.
		if err := o.sink.Store(Event{Kind: EventAgentMessage, MessageID: id, Text: before, Author: o.author}); err != nil {
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
	return o.sink.Store(Event{Kind: EventAgentMessage, MessageID: fmt.Sprintf("%d-%d", o.stepID, o.seq), Text: after, Author: o.author})
}

// Partial ends a message cut off mid-way (a fault, a stop, a shutdown) and returns it as the
// runner stores it: marked interrupted, with all its text, held text included. ok is false
// when no message was being written.
func (o *StepOutput) Partial() (ev Event, ok bool) {
	id, text, _ := o.take()
	if id == "" || trimSpace(text) == "" {
		return Event{}, false
	}
	return Event{Kind: EventAgentMessage, MessageID: id, Text: text, Author: o.author, Interrupted: true}, true
}

// Draft returns the text written since the last Draft, for the runner to store in its next
// batch; ok is false when there is none (or the message is held back).
func (o *StepOutput) Draft() (d Draft, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.msgID == "" || o.holding || len(o.text) == o.saved {
		return Draft{}, false
	}
	d = Draft{MessageID: o.msgID, Author: o.author, At: o.saved, Text: string(o.text[o.saved:])}
	o.saved = len(o.text)
	return d, true
}

// As sets who speaks in the messages that follow; a message by someone else ends first.
func (o *StepOutput) As(author string) {
	o.mu.Lock()
	same := author == o.author
	o.mu.Unlock()
	if same {
		return
	}
	_ = o.EndMessage()
	o.mu.Lock()
	o.author = author
	o.mu.Unlock()
}

// Plan publishes the agent's current execution plan.
func (o *StepOutput) Plan(p Plan) error {
	return o.sink.Store(Event{Kind: EventPlan, Plan: &p, Author: o.author})
}

// Ask stores a pending question, ending the current message first. Fields that would
// collect secrets are refused first.
func (o *StepOutput) Ask(q Question) (int64, error) {
	if err := o.EndMessage(); err != nil {
		return 0, err
	}
	if q.Asker == "" {
		q.Asker = o.author
	}
	q.AllowCancel = q.AllowCancel || o.cancels
	q = RefuseSecrets(q)
	if err := q.Check(); err != nil {
		return 0, fmt.Errorf("the agent asked an invalid question: %w", err)
	}
	return o.sink.Ask(q)
}

// Checkpoint stores the agent's own state for its next step.
func (o *StepOutput) Checkpoint(state any) error {
	b, err := jsonMarshal(state)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return o.sink.Store(Event{Kind: EventCheckpoint, Checkpoint: b})
}

// Tool records a tool call as it stands, ending the current message first, so that the
// call shows after the text the model wrote before it.
func (o *StepOutput) Tool(call ToolCall) error {
	if err := o.EndMessage(); err != nil {
		return err
	}
	return o.sink.Store(Event{Kind: EventToolCall, ToolCall: &call, Author: o.author})
}

// Await waits for the resolution of a live question the step asked.
func (o *StepOutput) Await(ctx context.Context, questionID int64) (Resolution, error) {
	return o.sink.Await(ctx, questionID)
}

// Draft is text of a message still being written, stored in a batch so that a crash loses
// at most the newest part of it.
type Draft struct {
	ConversationID int64
	RunID          int64
	MessageID      string
	Author         string
	// At is where Text begins in the message.
	At   int
	Text string
}
