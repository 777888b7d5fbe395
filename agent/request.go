package agent

// UserInputRequest is the request_user_input(prompt, context, request_type) tool call that
// LLM agents and the built-in workflow agents use to ask. Fields is optional: without it the
// request type decides the form (see Question).
type UserInputRequest struct {
	Prompt      string         `json:"prompt"`
	Context     map[string]any `json:"context,omitempty"`
	RequestType RequestType    `json:"request_type"`
	Fields      []Field        `json:"fields,omitempty"`
}
