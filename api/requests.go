package api

import "encoding/json"

// The JSON bodies of the API's requests. The server takes each as JSON, or as a form with
// the same field names (multipart/form-data where files go with it); a field left out is
// the same as an empty one.

// NewConversation is the body of POST /conversations: the agent to talk to, and the first
// message.
type NewConversation struct {
	// Agent is the agent's name (GET /agents).
	Agent string `json:"agent"`
	// Text is the first message; it may be empty when files go with it.
	Text string `json:"text"`
	// Nonce is an idempotency key: a request repeated with the same nonce starts one
	// conversation.
	Nonce string `json:"nonce"`
}

// NewMessage is the body of POST /conversations/{id}/messages: the person's next message.
type NewMessage struct {
	// Text is the message; it may be empty when files go with it.
	Text string `json:"text"`
	// Nonce is an idempotency key: a message sent again with the same nonce is posted once.
	Nonce string `json:"nonce"`
}

// EditMessage is the body of POST /conversations/{id}/messages/{event}/edit: the message as
// it should have been.
type EditMessage struct {
	Text string `json:"text"`
	// Nonce is an idempotency key: an edit sent again with the same nonce starts one version.
	Nonce string `json:"nonce"`
}

// Regenerate is the body of POST /conversations/{id}/regenerate (which may have none).
type Regenerate struct {
	// Nonce is an idempotency key: a request sent again with the same nonce starts one
	// version.
	Nonce string `json:"nonce"`
}

// Answer is the JSON body of POST /questions/{id}/answer (an answer with files goes as
// multipart/form-data instead: each value a form field, each file a part named after its
// field).
type Answer struct {
	// Values are the answers by field name, each as JSON: a string, a number, a boolean, a
	// list (of strings, numbers or booleans) for a multiselect, an object for a JSON field,
	// or null for none. They are kept as written, so that a number reaches the field's
	// checks as it was sent.
	Values map[string]json.RawMessage `json:"values"`
}

// FeedbackRequest is the body of PUT /conversations/{id}/replies/{event}/feedback and of
// PUT /questions/{id}/feedback: a person's opinion of the item, replacing theirs.
type FeedbackRequest struct {
	// Rating is good or bad for a reply, useful or unneeded for a question.
	Rating string `json:"rating"`
	// Comment is what was wrong (optional), Reasons those ticked of the reasons staff list.
	Comment string   `json:"comment,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

// Decline is the body of POST /questions/{id}/decline (which may have none).
type Decline struct {
	// Reason is why, for the agent; it may be empty.
	Reason string `json:"reason"`
}
