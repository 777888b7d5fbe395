package openai

import "encoding/json"

// chatRequest is the body of a chat-completions request. Optional fields are left out when
// unset, as openai-go left them out: strict servers refuse a null where a value belongs.
type chatRequest struct {
	Messages       []chatMessage   `json:"messages"`
	Model          string          `json:"model"`
	Temperature    *float64        `json:"temperature,omitempty"`
	ToolChoice     string          `json:"tool_choice,omitempty"`
	Tools          []chatTool      `json:"tools,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Stream         bool            `json:"stream,omitempty"`
}

// chatMessage is one message of a request. Content is a pointer because an assistant's
// turn that only calls tools has none, while every other message has one, even "";
// ToolCallID is there, even "", in a tool's message only.
type chatMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content,omitempty"`
	ToolCallID *string    `json:"tool_call_id,omitempty"`
	ToolCalls  []chatCall `json:"tool_calls,omitempty"`
}

// chatCall is a tool call of an assistant's turn, sent back to the model.
type chatCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chatTool is a function the model is offered.
type chatTool struct {
	Type     string       `json:"type"`
	Function functionDecl `json:"function"`
}

// functionDecl declares a function: its parameters are a JSON Schema, left out when nil.
type functionDecl struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitzero"`
}

// function offers the model a function.
func function(d functionDecl) chatTool { return chatTool{Type: "function", Function: d} }

// responseFormat asks for a kind of reply; the analyzer asks for {"type": "json_object"}.
type responseFormat struct {
	Type string `json:"type"`
}

// completionReply is what Parley reads of a chat.completion: the choices' text and why
// they ended. Like openai-go it reads a member of an unexpected type as empty rather than
// failing (client_test.go holds it to that).
type completionReply struct {
	Choices loose[[]replyChoice] `json:"choices"`
}

type replyChoice struct {
	FinishReason looseString         `json:"finish_reason"`
	Message      loose[replyMessage] `json:"message"`
}

type replyMessage struct {
	Content looseString `json:"content"`
	Refusal looseString `json:"refusal"`
}

// loose reads a value of type T, and a value of another shape (an object for a list, a
// list with a string in it, ...) as T's zero value. Its syntax was checked before.
type loose[T any] struct{ v T }

func (l *loose[T]) UnmarshalJSON(b []byte) error {
	var v T
	if json.Unmarshal(b, &v) == nil {
		l.v = v
	}
	return nil
}

// looseString reads a string member as openai-go read it: null is "", and a number, a
// boolean or an object in its place is its JSON text rather than an error.
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*s = ""
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = looseString(v)
	default:
		*s = looseString(b)
	}
	return nil
}
