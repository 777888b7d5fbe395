package api

// The answers of the API's requests that wrap what they return in an object (the
// envelopes); a request that answers with one object (a question, a conversation's state,
// its versions) answers with it as it is. A list is never null: an empty one is [].

// Me is what GET /me answers: the token's person and the token's name.
type Me struct {
	Name string `json:"name"`
	// Role is the person's role: "user", "staff" or "service".
	Role string `json:"role"`
	// Token is the name of the token the request came with.
	Token string `json:"token"`
}

// AgentList is what GET /agents answers: the agents the person may talk to.
type AgentList struct {
	Agents []Agent `json:"agents"`
}

// ConversationList is what GET /conversations answers: the person's conversations, newest
// first.
type ConversationList struct {
	Conversations []Conversation `json:"conversations"`
}

// ConversationCreated is what POST /conversations answers (201): the conversation started.
type ConversationCreated struct {
	Conversation Conversation `json:"conversation"`
}

// MessageSent is what POST /conversations/{id}/messages answers (202): the conversation,
// and the message as queued when it waits for the agent to finish.
type MessageSent struct {
	Conversation Conversation `json:"conversation"`
	Queued       *Queued      `json:"queued,omitempty"`
}

// VersionStarted is what POST /conversations/{id}/regenerate and
// POST /conversations/{id}/messages/{event}/edit answer (202): the conversation, which now
// shows the new version, and that version.
type VersionStarted struct {
	Conversation Conversation `json:"conversation"`
	Version      int64        `json:"version"`
}

// QuestionList is what GET /questions answers: the questions waiting, oldest first, each
// with its conversation.
type QuestionList struct {
	Questions []Question `json:"questions"`
}
