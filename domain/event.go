package domain

import (
	"encoding/json"
	"time"
)

// EventKind names what happened in a conversation.
type EventKind string

// The kinds of event in a conversation's log.
const (
	EventUserMessage EventKind = "user_message"
	// EventAgentMessage is a finished agent message. Its text streamed live first, through
	// the Hub; the log holds it whole, once.
	EventAgentMessage     EventKind = "agent_message"
	EventPlan             EventKind = "plan"
	EventQuestionAsked    EventKind = "question_asked"
	EventQuestionResolved EventKind = "question_resolved"
	// EventQuestionApproved is one person's approval of a question that needs several
	// (Question.Approvals), its Resolution holding who and what they approved; the question
	// is resolved once enough approved the same.
	EventQuestionApproved EventKind = "question_approved"
	EventRunState         EventKind = "run_state"
	EventCheckpoint       EventKind = "checkpoint"
	// EventIntake records what intake made of a person's message: the cleaned intent, the
	// language, the documents split off.
	EventIntake EventKind = "intake"
	// EventToolCall is a call of a tool server's tool: where it appears, and each change of it.
	EventToolCall EventKind = "tool_call"
	// EventVersion records that the conversation shows another version from now on (Shown):
	// one just started (a reply regenerated, a message edited) or one the person chose.
	EventVersion EventKind = "version"
	// EventMessageQueued is a person's message sent while the agent worked: it waits for the
	// run to end. The user_message that sends it names it (Queued); EventMessageUnqueued
	// records one the person removed.
	EventMessageQueued   EventKind = "message_queued"
	EventMessageUnqueued EventKind = "message_unqueued"
)

// RunState is the state of a conversation's current run, shown in the list and on the page.
type RunState string

// The states a run moves through.
const (
	StateRunning     RunState = "running"
	StateWaiting     RunState = "waiting"
	StateDone        RunState = "done"
	StateFailed      RunState = "failed"
	StateInterrupted RunState = "interrupted"
	// StateStopped is a run the person stopped; Retry continues it.
	StateStopped RunState = "stopped"
)

// RunStates are the states a conversation can be found in, as the review desk offers them.
var RunStates = []RunState{StateWaiting, StateRunning, StateDone, StateFailed, StateInterrupted, StateStopped}

// Label is the state as the person reads it.
func (s RunState) Label() string {
	switch s {
	case StateRunning:
		return "running"
	case StateWaiting:
		return "waiting for an answer"
	case StateDone:
		return "done"
	case StateFailed:
		return "failed"
	case StateInterrupted:
		return "interrupted"
	case StateStopped:
		return "stopped"
	}
	return "new"
}

// Event is one entry of a conversation's append-only log. Ids increase monotonically.
// The header (ID, ConversationID, RunID, Kind, At) is stored in columns; the rest is the payload.
type Event struct {
	ID             int64     `json:"-"`
	ConversationID int64     `json:"-"`
	RunID          int64     `json:"-"`
	Kind           EventKind `json:"-"`
	At             time.Time `json:"-"`
	// Version is the version of the conversation the event belongs to (see Version).
	Version int64 `json:"-"`

	// MessageID names an agent message: the live text of the Hub carries it too.
	MessageID string `json:"message_id,omitempty"`
	Text      string `json:"text,omitempty"`
	// Author is who wrote a message: the person, or the agent (or specialist) speaking.
	Author string `json:"author,omitempty"`
	// Nonce is the sender's own key of a person's message (see Message.Nonce), so that a
	// client that follows the stream knows its own message when it comes back.
	Nonce string `json:"nonce,omitempty"`
	// Interrupted marks a message cut off before it ended; Stopped one the person stopped.
	Interrupted bool            `json:"interrupted,omitempty"`
	Stopped     bool            `json:"stopped,omitempty"`
	Plan        *Plan           `json:"plan,omitempty"`
	Question    *Question       `json:"question,omitempty"`
	Resolution  *Resolution     `json:"resolution,omitempty"`
	State       RunState        `json:"state,omitempty"`
	Error       string          `json:"error,omitempty"`
	Checkpoint  json.RawMessage `json:"checkpoint,omitempty"`
	// Documents are attached to a person's message: the files they attached, and for
	// agents also the user_context documents of the message's intake.
	Documents []DocumentRef `json:"documents,omitempty"`
	// Intent is, for agents, the cleaned prompt of a person's message (see Prompt).
	Intent string  `json:"intent,omitempty"`
	Intake *Intake `json:"intake,omitempty"`
	// ToolCall is a tool call as it stands.
	ToolCall *ToolCall `json:"tool_call,omitempty"`
	// Queued names the message_queued event of a queued message: the user_message that sent
	// it, or the message_unqueued that removed it.
	Queued int64 `json:"queued,omitempty"`
	// Shown is the version a version event shows, Reason why it was started (for a new one).
	Shown  int64         `json:"shown,omitempty"`
	Reason VersionReason `json:"reason,omitempty"`
}

// StepStatus is the status of one step of a plan.
type StepStatus string

// The statuses a plan step can have.
const (
	StepPending    StepStatus = "pending"
	StepInProgress StepStatus = "in_progress"
	StepDone       StepStatus = "done"
	StepFailed     StepStatus = "failed"
	StepSkipped    StepStatus = "skipped"
)

// PlanStep is one step of an execution plan.
type PlanStep struct {
	Title  string     `json:"title"`
	Status StepStatus `json:"status"`
}

// Plan is an agent's execution plan as it stands at one moment; each update is a new event.
type Plan struct {
	Title string     `json:"title,omitempty"`
	Steps []PlanStep `json:"steps"`
}

// AskedRecord is the question a question_asked event stores, as a record not yet resolved.
func (ev Event) AskedRecord() QuestionRecord {
	return QuestionRecord{Question: *ev.Question, ConversationID: ev.ConversationID, RunID: ev.RunID, AskedAt: ev.At}
}
