package openai

import (
	"encoding/json"

	"github.com/parley-chat/parley/domain"
)

// The roles of the messages sent to the model.
const (
	roleSystem    = "system"
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
)

// message is one chat message as the model will get it; converted to the client's
// parameter types only when a request is sent.
type message struct {
	Role    string
	Content string
	// Calls are an assistant message's tool calls; CallID is the call a tool message answers.
	Calls  []toolCall
	CallID string
}

// toolCall is one tool call of the model, exactly as it wrote it.
type toolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// checkpointBackend marks this back end's checkpoints among any others in the log.
const checkpointBackend = "openai"

// checkpoint is stored (out.Checkpoint) whenever the model replies with tool calls, before
// anything is asked: the assistant turn as the model wrote it, so that later steps send it
// back verbatim, followed by one tool result per call. Results holds the results the agent
// wrote itself, by call id (read_document's results, arguments it could not use); every
// other call was asked as the question whose Key is the call id, and its result is made
// from that question's resolution.
//
//	{"backend":"openai","v":1,"content":"Let me check.","tool_calls":[{"id":"call_1",
//	 "name":"request_user_input","arguments":"{\"prompt\":...}"}],"results":{"call_1":"..."}}
type checkpoint struct {
	Backend string            `json:"backend"`
	Version int               `json:"v"`
	Content string            `json:"content,omitempty"`
	Calls   []toolCall        `json:"tool_calls"`
	Results map[string]string `json:"results,omitempty"`
}

// readCheckpoint decodes a checkpoint event of this back end; ok is false for any other.
func readCheckpoint(raw json.RawMessage) (checkpoint, bool) {
	var cp checkpoint
	if err := json.Unmarshal(raw, &cp); err != nil || cp.Backend != checkpointBackend || len(cp.Calls) == 0 {
		return checkpoint{}, false
	}
	return cp, true
}

// assistantTurn is the assistant message of the checkpoint.
func (cp checkpoint) assistantTurn() message {
	return message{Role: roleAssistant, Content: cp.Content, Calls: cp.Calls}
}

// marshalCompact writes v as compact JSON without HTML escaping (models read it, not browsers).
func marshalCompact(v any) string { return domain.MarshalCompact(v) }
