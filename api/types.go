package api

import (
	"time"

	"github.com/parley-chat/parley/domain"
)

// The kinds of the API's stream events (the SSE event name; the JSON's "type").
const (
	MessageDelta        = "message.delta"
	MessageDone         = "message.done"
	Plan                = "plan"
	QuestionAsked       = "question.asked"
	QuestionResolved    = "question.resolved"
	RunState            = "run.state"
	VersionShown        = "conversation.version"
	MessageQueued       = "message.queued"
	MessageUnqueued     = "message.unqueued"
	ToolCall            = "tool.call"
	ConversationDeleted = "conversation.deleted"
)

// The JSON API's objects (/api/v1; documented in web/openapi.json). Each is built from the
// domain's types in one place, so that the conversation endpoint and the event stream
// describe a thing the same way; they are exported so that `parley chat` decodes what the
// server encodes from the same definitions.

// Agent is an agent people can talk to.
type Agent struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Builtin     bool   `json:"builtin"`
}

// Conversation is a conversation as lists and pages show it.
type Conversation struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
	// Kind is "chat" (a conversation with one of Parley's agents) or "inbound" (the
	// questions an agent outside Parley asks over its MCP server, of no agent: Agent empty).
	Kind       string    `json:"kind"`
	Agent      string    `json:"agent"`
	AgentTitle string    `json:"agent_title"`
	Owner      string    `json:"owner"`
	State      string    `json:"state"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	Archived   bool      `json:"archived"`
	URL        string    `json:"url"`
	// Version is the version of the conversation shown (0: as first written).
	Version int64 `json:"version"`
}

// Message is a finished message, the person's or an agent's.
type Message struct {
	EventID   int64  `json:"event_id"`
	MessageID string `json:"message_id,omitempty"`
	Role      string `json:"role"`
	Author    string `json:"author"`
	// Nonce is the key the sender gave a person's message, echoed so that a client knows
	// its own message in the stream.
	Nonce       string               `json:"nonce,omitempty"`
	Text        string               `json:"text"`
	Documents   []domain.DocumentRef `json:"documents,omitempty"`
	Interrupted bool                 `json:"interrupted,omitempty"`
	Stopped     bool                 `json:"stopped,omitempty"`
	At          time.Time            `json:"at"`
}

// Queued is a message the person sent while the agent worked, waiting for the run to end.
type Queued struct {
	ID        int64                `json:"id"`
	Author    string               `json:"author"`
	Text      string               `json:"text"`
	Documents []domain.DocumentRef `json:"documents,omitempty"`
	At        time.Time            `json:"at"`
}

// QueuedOf is a queued message as the API shows it.
func QueuedOf(q domain.QueuedMessage) Queued {
	return Queued{ID: q.ID, Author: q.Author, Text: q.Text, Documents: q.Documents, At: q.At}
}

// Question is a question as asked, with where it belongs and, once resolved, how.
type Question struct {
	domain.Question
	ConversationID int64              `json:"conversation_id"`
	RunID          int64              `json:"run_id"`
	AskedAt        time.Time          `json:"asked_at"`
	State          string             `json:"state"`
	Resolution     *domain.Resolution `json:"resolution,omitempty"`
	// Approved are the approvals so far of a question that needs several.
	Approved []domain.Resolution `json:"approved,omitempty"`
	// Conversation is set where questions of many conversations are listed.
	Conversation *Conversation `json:"conversation,omitempty"`
}

// ConversationState is a conversation as GET /conversations/{id} gives it.
type ConversationState struct {
	Conversation Conversation `json:"conversation"`
	Messages     []Message    `json:"messages"`
	Questions    []Question   `json:"questions"`
	Plan         *domain.Plan `json:"plan"`
	LastEventID  int64        `json:"last_event_id"`
	// Version is the version read; Queued the messages waiting for the agent to finish.
	Version int64    `json:"version"`
	Queued  []Queued `json:"queued"`
	// Feedback are the reader's own opinions of the conversation's replies and questions.
	Feedback []Feedback `json:"feedback"`
}

// Feedback is a person's opinion of a reply (item "reply", item_id its message's event_id)
// or a question (item "question", item_id its id), as PUT on the item stores it.
type Feedback struct {
	ConversationID int64  `json:"conversation_id"`
	Item           string `json:"item"`
	ItemID         int64  `json:"item_id"`
	By             string `json:"by"`
	// Rating is good or bad for a reply, useful or unneeded for a question.
	Rating  string    `json:"rating"`
	Comment string    `json:"comment"`
	Reasons []string  `json:"reasons"`
	At      time.Time `json:"at"`
}

// FeedbackOf is an opinion as the API shows it.
func FeedbackOf(f domain.Feedback) Feedback {
	out := Feedback{ConversationID: f.ConversationID, Item: string(f.Item), ItemID: f.ItemID, By: f.By, Rating: string(f.Rating),
		Comment: f.Comment, Reasons: f.Reasons, At: f.At}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	return out
}

// The data of the event stream's events (see the OpenAPI document's description of it).
type (
	// Delta is a message.delta: the next piece of the message being written.
	Delta struct {
		EventID   int64  `json:"event_id"`
		MessageID string `json:"message_id"`
		Author    string `json:"author"`
		Offset    int    `json:"offset"`
		Text      string `json:"text"`
	}
	// EventHead is what every event of the log carries: its id and time.
	EventHead struct {
		EventID int64     `json:"event_id"`
		At      time.Time `json:"at"`
	}
	// VersionEvent is a conversation.version: the conversation shows another version
	// from here (a reply regenerated, a message edited, a version chosen); a client reads
	// the conversation again.
	VersionEvent struct {
		EventHead
		Version int64                `json:"version"`
		Reason  domain.VersionReason `json:"reason,omitempty"`
	}
	// QueuedEvent is a message.queued: a message sent while the agent works waits.
	QueuedEvent struct {
		EventHead
		Queued Queued `json:"queued"`
	}
	// UnqueuedEvent is a message.unqueued: a queued message was sent, or removed.
	UnqueuedEvent struct {
		EventHead
		ID   int64 `json:"id"`
		Sent bool  `json:"sent"`
	}
	// PlanEvent is a plan event: the plan as it now stands.
	PlanEvent struct {
		EventHead
		Plan *domain.Plan `json:"plan"`
	}
	// AskedEvent is a question.asked.
	AskedEvent struct {
		EventHead
		Question Question `json:"question"`
	}
	// ResolvedEvent is a question.resolved.
	ResolvedEvent struct {
		EventHead
		QuestionID int64              `json:"question_id"`
		Resolution *domain.Resolution `json:"resolution"`
	}
	// RunStateEvent is a run.state.
	RunStateEvent struct {
		EventHead
		RunID int64           `json:"run_id"`
		State domain.RunState `json:"state"`
		Error string          `json:"error,omitempty"`
	}
	// ToolEvent is a tool.call.
	ToolEvent struct {
		EventHead
		ToolCall *domain.ToolCall `json:"tool_call"`
	}
	// DeletedEvent is a conversation.deleted, an empty object: the conversation is gone,
	// and the stream ends.
	DeletedEvent struct{}
)

// MessageOf is the message of a user_message or agent_message event.
func MessageOf(ev domain.Event) Message {
	m := Message{EventID: ev.ID, Role: "user", Author: ev.Author, Nonce: ev.Nonce, Text: ev.Text, Documents: ev.Documents, At: ev.At}
	if ev.Kind == domain.EventAgentMessage {
		m.Role, m.MessageID, m.Interrupted, m.Stopped = "agent", ev.MessageID, ev.Interrupted, ev.Stopped
	}
	return m
}

// QuestionOf is a question as the API shows it: pending until resolved, then as it
// was resolved.
func QuestionOf(rec domain.QuestionRecord) Question {
	q := Question{Question: rec.Question, ConversationID: rec.ConversationID, RunID: rec.RunID, AskedAt: rec.AskedAt,
		State: "pending", Resolution: rec.Resolution, Approved: rec.Approved}
	if rec.Resolution != nil {
		q.State = string(rec.Resolution.Outcome)
	}
	if q.Fields == nil {
		q.Fields = []domain.Field{}
	}
	return q
}

// Error is the body of every API error.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is what went wrong: a code for programs, a sentence for people, and where
// it applies the message of each bad field or the question as it stands.
type ErrorBody struct {
	Code    string             `json:"code"`
	Message string             `json:"message"`
	Fields  domain.FieldErrors `json:"fields,omitempty"`
	// Question is the question as it stands, when it was resolved before.
	Question *Question `json:"question,omitempty"`
}

// Version is one version of a conversation: where it branched, and why.
type Version struct {
	Version     int64                `json:"version"`
	Parent      int64                `json:"parent"`
	ForkEventID int64                `json:"fork_event_id"`
	Reason      domain.VersionReason `json:"reason,omitempty"`
	By          string               `json:"by,omitempty"`
	CreatedAt   *time.Time           `json:"created_at,omitempty"`
}

// Choice is a point of the version shown where versions differ: after event
// fork_event_id it goes on as each of versions; current is the index of the one shown.
type Choice struct {
	ForkEventID int64   `json:"fork_event_id"`
	Versions    []int64 `json:"versions"`
	Current     int     `json:"current"`
}

// Versions is what GET /conversations/{id}/versions answers: the versions, version 0 (the
// conversation as first written) included, and the points where the one shown has others.
type Versions struct {
	Current  int64     `json:"current"`
	Versions []Version `json:"versions"`
	Choices  []Choice  `json:"choices"`
}
