package domain

import (
	"context"
	"encoding/json"
)

// Info describes an agent in the new-conversation picker.
type Info struct {
	Name        string
	Title       string
	Description string
	// Builtin agents run offline and say so.
	Builtin bool
	// NoForms says the agent may not ask by form: a UserInputMetaData form in its text is
	// shown as its text, not asked.
	NoForms bool
	// Cancels says the agent stops its run when the person cancels one of its questions:
	// each of its questions then offers Cancel beside Decline.
	Cancels bool
	// Kind is the agent's back end ("builtin", "openai", "a2a", "agui", "acp"): the pages tag
	// the agent with it and draw its icon when it has none of its own.
	Kind string
	// Icon names the icon pages draw for the agent (one of views.Icon's); Starters are
	// messages the home page offers to begin with. Both come from its [[agents]] entry.
	Icon     string
	Starters []string
}

// Presentation is how the pages present an agent, from its [[agents]] entry: its back end,
// its icon and its starter messages (see Info).
type Presentation struct {
	Kind, Icon string
	Starters   []string
}

// Trigger is why a step of an agent runs.
type Trigger string

// The triggers of a step.
const (
	TriggerMessage Trigger = "message"
	TriggerResume  Trigger = "resume"
	TriggerRetry   Trigger = "retry"
)

// StepInput is what an agent gets each time it runs: the whole conversation so far.
// An agent keeps no state between steps: what it needs is in History (its checkpoints included).
type StepInput struct {
	ConversationID int64
	RunID          int64
	// Person is the account name of the conversation's owner, on whose behalf the agent
	// works (a coding agent's workspace may be theirs alone).
	Person string
	// StepID is stable across re-deliveries of the same resume: agents de-duplicate on it.
	StepID  int64
	Trigger Trigger
	// History is the conversation so far. Person's messages carry their intake's intent and
	// documents: read them with Event.Prompt.
	History []Event
	// Language is the language the person writes in (ISO 639-1), when intake detected one.
	Language string
	// Documents reads the conversation's documents (those listed on the messages).
	Documents Documents
}

// Output is how an agent reports while it runs. Every call is stored before it returns.
type Output interface {
	// Text appends to the agent's current message.
	Text(delta string) error
	// EndMessage finishes the current message; the next Text starts a new one.
	EndMessage() error
	// As sets who speaks in the messages that follow (a specialist of a workflow, say).
	As(author string)
	// Plan publishes the current execution plan.
	Plan(p Plan) error
	// Ask records a pending question and returns its id. The agent then returns; it is run
	// again, with the answers in History, once every question of the run is resolved.
	Ask(q Question) (int64, error)
	// Checkpoint stores the agent's own state, read back with LastCheckpoint.
	Checkpoint(state any) error
	// Tool records a tool call as it stands: where it appears first, and each change after.
	Tool(call ToolCall) error
	// Await waits, within the step, for the resolution of a Live question the step asked.
	// When ctx ends first, the question is resolved as expired and the error returned.
	Await(ctx context.Context, questionID int64) (Resolution, error)
}

// Agent is one back end behind Parley's single interface.
type Agent interface {
	Info() Info
	// Step runs the agent until it finishes or asks. It returns nil in both cases.
	Step(ctx context.Context, in StepInput, out Output) error
}

// Reattacher is an Agent whose work goes on elsewhere (a remote task). After a restart the
// runner runs it again on its interrupted conversations, so that it catches up by itself.
type Reattacher interface {
	Reattaches() bool
}

// LastCheckpoint decodes the newest checkpoint of the history into v and reports whether there was one.
func LastCheckpoint(history []Event, v any) (bool, error) {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Kind == EventCheckpoint {
			return true, json.Unmarshal(history[i].Checkpoint, v)
		}
	}
	return false, nil
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
