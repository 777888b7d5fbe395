package domain

// ConversationKind says what a conversation holds.
type ConversationKind string

// The kinds of conversation.
const (
	// KindChat is a person's conversation with one of Parley's agents.
	KindChat ConversationKind = "chat"
	// KindInbound holds the questions of agents reaching Parley from outside (through its MCP
	// server): one per person and client, "Questions from <client>", of no agent of Parley's.
	// No agent runs in them: a question is the whole of its run's work, and the asker learns
	// the outcome through its own call. Nobody writes messages into them.
	KindInbound ConversationKind = "inbound"
)

// InboundTitle is how pages name the agents of KindInbound conversations ("Questions from
// Claude Code, with agents over MCP").
const InboundTitle = "agents over MCP"

// InboundRequest is a question an agent outside Parley asks a person.
type InboundRequest struct {
	// UserID is the person asked, whose conversation holds the question.
	UserID int64
	// Client names the asking program ("Claude Code"): its conversation is the person's
	// conversation with that client.
	Client string
	// RequestID is the client's own id for the question, unique per person: asking again
	// with it returns the same question. Empty: every call asks anew.
	RequestID string
	// Digest stands for what was asked: a RequestID asked again must come with the same.
	Digest string
	// ToGroup is the group the question is for (its ID), 0 for the person asked: a group's
	// question is in every member's Inbox and not in the person's, unless they are a member.
	ToGroup int64
	// Via names the access token the client came with ("token laptop"), for the audit log.
	Via      string
	Question Question
}

// ReusedRequestID is the error of a request id given again with other arguments.
func ReusedRequestID(requestID string, questionID int64) error {
	return Errorf(EINVALID, "request_id %q was used for a different question (question %d): use a new request_id for a new question.", requestID, questionID)
}
