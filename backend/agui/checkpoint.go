package agui

import (
	"encoding/json"

	"github.com/parley-chat/parley/domain"
)

// checkpointBackend marks this back end's checkpoints among any others in the log.
const checkpointBackend = "agui"

// checkpoint is what Parley keeps of the agent's thread, stored (out.Checkpoint) when the
// thread begins and whenever a run finishes. Steps never keep it in memory; they read the
// newest one from History.
//
//	{"backend":"agui","v":1,"thread":"parley-…","state":{…},
//	 "open":[{"id":"int-1","expires":"2026-11-27T12:00:00Z"}],"said":["msg-1"]}
//
// Open are the interrupts the last finished run ended in, which the next run must answer,
// every one exactly once; each became the question whose Key is interruptKey(id), or
// Refusal says why Parley could not ask it.
type checkpoint struct {
	Backend string          `json:"backend"`
	Version int             `json:"v"`
	Thread  string          `json:"thread"`
	State   json.RawMessage `json:"state,omitempty"`
	Open    []openInterrupt `json:"open,omitempty"`
	// Said are the agent's own ids of the messages the run that stored the checkpoint wrote,
	// in order: the history sent back names them so.
	Said []string `json:"said,omitempty"`
}

// openInterrupt is an interrupt waiting for its resume entry.
type openInterrupt struct {
	ID      string `json:"id"`
	Refusal string `json:"refusal,omitempty"`
	// Expires is the interrupt's expiresAt: past it, only a cancellation may be sent.
	Expires string `json:"expires,omitempty"`
	// ToolCall is the id of the call of the agent's the interrupt holds, if any.
	ToolCall string `json:"tool_call,omitempty"`
}

// interruptKey is the Key of the question an interrupt became; a frontend tool call's
// question has the call's id as its Key.
func interruptKey(id string) string { return "interrupt:" + id }

// lastCheckpoint is the newest checkpoint of this back end in history, with its index
// (-1 when there is none).
func lastCheckpoint(history []domain.Event) (checkpoint, int) {
	for i := len(history) - 1; i >= 0; i-- {
		ev := history[i]
		if ev.Kind != domain.EventCheckpoint {
			continue
		}
		var cp checkpoint
		if json.Unmarshal(ev.Checkpoint, &cp) == nil && cp.Backend == checkpointBackend {
			return cp, i
		}
	}
	return checkpoint{}, -1
}
