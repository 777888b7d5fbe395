package domain

import (
	"encoding/json"
	"time"
)

// ToolStatus is where a tool call stands.
type ToolStatus string

// The states of a tool call. A call waits while its server asks the person something, or
// while the person is asked to approve it; it ends done, failed or rejected.
const (
	ToolRunning  ToolStatus = "running"
	ToolWaiting  ToolStatus = "waiting"
	ToolDone     ToolStatus = "done"
	ToolFailed   ToolStatus = "failed"
	ToolRejected ToolStatus = "rejected"
)

// Ended reports whether the call has its final result.
func (s ToolStatus) Ended() bool { return s == ToolDone || s == ToolFailed || s == ToolRejected }

// ToolCall is one call of a tool on a tool server (MCP), as the conversation shows it: each
// change is an event of its own (EventToolCall), the first one where the call appears, the
// later ones (Update) replacing it. What the model is told is Result.
type ToolCall struct {
	// Key names the call in the conversation (its card, its questions): the same in every event of it.
	Key string `json:"key"`
	// ID is the model's id of the call.
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Kind is what a coding agent's call does: read, edit, delete, move, search, execute,
	// think, fetch or other (ACP's tool kinds); empty for a tool server's call.
	Kind string `json:"kind,omitempty"`
	// Locations are the files the call works on, "path" or "path:line", relative to the
	// coding agent's workspace.
	Locations []string `json:"locations,omitempty"`
	// Arguments are the arguments the tool runs with (as the person approved them).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Status    ToolStatus      `json:"status"`
	// Update marks every event of the call after its first.
	Update bool `json:"update,omitempty"`
	// Waiting says what the call waits for, while it waits.
	Waiting string `json:"waiting,omitempty"`
	// Content is the result as the person sees it; Result the text the model gets.
	Content []ToolContent `json:"content,omitempty"`
	Result  string        `json:"result,omitempty"`
	Error   string        `json:"error,omitempty"`
	// Notes are things the person should know: a request of the server Parley declined, and why.
	Notes    []string      `json:"notes,omitempty"`
	Progress *ToolProgress `json:"progress,omitempty"`
	Started  time.Time     `json:"started"`
	// Took is how long the call ran, its waits for the person included, once it ended.
	Took time.Duration `json:"took,omitempty"`
	// State is the back end's own state of a call that waits (what to send back when it goes on).
	State json.RawMessage `json:"state,omitempty"`
	// Round counts the times the call waited for the person's answers; its questions' keys carry it.
	Round int `json:"round,omitempty"`
}

// ToolContent is one piece of a tool's result: text, an image (Data is base64), a link to a
// resource, a diff (a unified diff in Text of the file Name), or something Parley does not
// show, named in Text.
type ToolContent struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	MIME string `json:"mime,omitempty"`
	Data string `json:"data,omitempty"`
	URI  string `json:"uri,omitempty"`
	Name string `json:"name,omitempty"`
}

// ToolProgress is the last progress a running call reported.
type ToolProgress struct {
	Done    float64 `json:"done"`
	Total   float64 `json:"total,omitempty"`
	Message string  `json:"message,omitempty"`
}
