package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/parley-chat/parley/internal/wire"
)

// kind is the JSON type a field of an event must have.
type kind uint8

const (
	kString kind = iota + 1
	kInt
	kBool
	kObject
	kArray
	kStringOrArray
	// kValue is any JSON value but null; kNullable any value, null included.
	kValue
	kNullable
)

func (k kind) String() string {
	switch k {
	case kString:
		return "a string"
	case kInt:
		return "an integer"
	case kBool:
		return "a boolean"
	case kObject:
		return "an object"
	case kArray:
		return "an array"
	case kStringOrArray:
		return "a string or an array of parts"
	}
	return "a value"
}

// field is one field of an event's schema.
type field struct {
	name     string
	kind     kind
	required bool
}

func req(name string, k kind) field { return field{name: name, kind: k, required: true} }
func opt(name string, k kind) field { return field{name: name, kind: k} }

// baseFields are the fields every event may carry; attributed events may also carry
// subagentRunId.
var (
	baseFields   = []field{opt("timestamp", kInt), opt("rawEvent", kValue), opt("metadata", kObject)}
	attributable = opt("subagentRunId", kString)
)

// eventFields are the fields of each event type of AG-UI 1.0 (@ag-ui/core's schemas), beyond
// the base ones. Unknown keys are allowed, as the protocol's loose objects allow them; a null
// where a field is optional is not.
var eventFields = map[string][]field{
	"TEXT_MESSAGE_START":        {attributable, req("messageId", kString), opt("role", kString), opt("name", kString)},
	"TEXT_MESSAGE_CONTENT":      {attributable, req("messageId", kString), req("delta", kString)},
	"TEXT_MESSAGE_END":          {attributable, req("messageId", kString)},
	"TEXT_MESSAGE_CHUNK":        {attributable, opt("messageId", kString), opt("role", kString), opt("delta", kString), opt("name", kString)},
	"TOOL_CALL_START":           {attributable, req("toolCallId", kString), req("toolCallName", kString), opt("parentMessageId", kString)},
	"TOOL_CALL_ARGS":            {attributable, req("toolCallId", kString), req("delta", kString)},
	"TOOL_CALL_END":             {attributable, req("toolCallId", kString)},
	"TOOL_CALL_CHUNK":           {attributable, opt("toolCallId", kString), opt("toolCallName", kString), opt("parentMessageId", kString), opt("delta", kString)},
	"TOOL_CALL_RESULT":          {attributable, req("messageId", kString), req("toolCallId", kString), req("content", kStringOrArray), opt("role", kString)},
	"STATE_SNAPSHOT":            {attributable, req("snapshot", kNullable)},
	"STATE_DELTA":               {attributable, req("delta", kArray)},
	"MESSAGES_SNAPSHOT":         {req("messages", kArray)},
	"ACTIVITY_SNAPSHOT":         {attributable, req("messageId", kString), req("activityType", kString), req("content", kObject), opt("replace", kBool)},
	"ACTIVITY_DELTA":            {attributable, req("messageId", kString), req("activityType", kString), req("patch", kArray)},
	"RAW":                       {attributable, req("event", kNullable), opt("source", kString)},
	"CUSTOM":                    {attributable, req("name", kString), req("value", kNullable)},
	"RUN_STARTED":               {req("threadId", kString), req("runId", kString), opt("protocolVersion", kString), opt("parentRunId", kString), opt("input", kObject)},
	"RUN_FINISHED":              {req("threadId", kString), req("runId", kString), opt("result", kValue), opt("outcome", kObject), opt("usage", kArray)},
	"RUN_ERROR":                 {req("message", kString), opt("code", kString), opt("usage", kArray)},
	"STEP_STARTED":              {attributable, req("stepName", kString)},
	"STEP_FINISHED":             {attributable, req("stepName", kString)},
	"REASONING_START":           {attributable, req("messageId", kString)},
	"REASONING_MESSAGE_START":   {attributable, req("messageId", kString), req("role", kString)},
	"REASONING_MESSAGE_CONTENT": {attributable, req("messageId", kString), req("delta", kString)},
	"REASONING_MESSAGE_END":     {attributable, req("messageId", kString)},
	"REASONING_MESSAGE_CHUNK":   {attributable, opt("messageId", kString), opt("delta", kString)},
	"REASONING_END":             {attributable, req("messageId", kString)},
	"REASONING_ENCRYPTED_VALUE": {attributable, req("subtype", kString), req("entityId", kString), req("encryptedValue", kString)},
	"SUBAGENT_STARTED":          {req("subagentRunId", kString), req("name", kString), opt("description", kString), opt("parentSubagentRunId", kString), opt("parentToolCallId", kString), opt("parentMessageId", kString)},
	"SUBAGENT_FINISHED":         {req("subagentRunId", kString), opt("result", kValue), opt("outcome", kObject)},
	"SUBAGENT_ERROR":            {req("subagentRunId", kString), req("message", kString), opt("code", kString)},
}

// event is one AG-UI event, validated: the fields Parley acts on, decoded.
type event struct {
	Type         string
	MessageID    string
	Role         string
	Delta        string
	ToolCallID   string
	ToolCallName string
	ParentID     string
	Content      json.RawMessage
	Snapshot     json.RawMessage
	Patch        []patchOp
	StepName     string
	ThreadID     string
	RunID        string
	Message      string
	Code         string
	Outcome      *outcome
}

// outcome is how a run finished.
type outcome struct {
	Type       string      `json:"type"`
	Pending    []string    `json:"pendingToolCallIds"`
	Interrupts []interrupt `json:"interrupts"`
}

// interrupt is something a run needs from the person before it can go on.
type interrupt struct {
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message,omitempty"`
	ToolCallID     string          `json:"toolCallId,omitempty"`
	ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
	ExpiresAt      string          `json:"expiresAt,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
}

// patchOp is one RFC 6902 operation of a STATE_DELTA.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// protocolError is an event that breaks the protocol; its message names the event and field.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

func invalid(typ, format string, args ...any) error {
	if typ == "" {
		return &protocolError{msg: "invalid event: " + fmt.Sprintf(format, args...)}
	}
	return &protocolError{msg: "invalid " + typ + " event: " + fmt.Sprintf(format, args...)}
}

// parseEvent validates one event as AG-UI 1.0 defines it and decodes it.
func parseEvent(data []byte) (event, error) {
	raw, ok := wire.Members(data)
	if !ok {
		return event{}, invalid("", "not a JSON object: %.80q", data)
	}
	var ev event
	var err error
	if ev.Type, ok = plainString(raw["type"]); !ok {
		err = json.Unmarshal(raw["type"], &ev.Type)
	}
	if err != nil || ev.Type == "" {
		return event{}, invalid("", "type is missing or not a string")
	}
	fields, ok := eventFields[ev.Type]
	if !ok {
		return event{}, invalid("", "unknown type %q", ev.Type)
	}
	for _, list := range [2][]field{baseFields, fields} {
		if err := checkFields(raw, list...); err != nil {
			return event{}, invalid(ev.Type, "%v", err)
		}
	}
	str := func(name string) string {
		v, ok := raw[name]
		if !ok {
			return ""
		}
		if s, ok := plainString(v); ok {
			return s
		}
		var s string
		_ = json.Unmarshal(v, &s)
		return s
	}
	ev.MessageID, ev.Role, ev.ToolCallID, ev.ToolCallName = str("messageId"), str("role"), str("toolCallId"), str("toolCallName")
	ev.ParentID, ev.StepName, ev.ThreadID, ev.RunID = str("parentMessageId"), str("stepName"), str("threadId"), str("runId")
	ev.Message, ev.Code = str("message"), str("code")
	if ev.Type != "STATE_DELTA" {
		ev.Delta = str("delta")
	}
	// The members are the stream's buffer, read again for the next event: what is kept, copied.
	ev.Content, ev.Snapshot = bytes.Clone(raw["content"]), bytes.Clone(raw["snapshot"])
	return ev, ev.decodeNested(raw)
}

// decodeNested checks and decodes what lies inside the fields: roles, outcomes, patches,
// result parts, snapshot messages.
func (ev *event) decodeNested(raw map[string]json.RawMessage) error {
	switch ev.Type {
	case "TEXT_MESSAGE_START", "TEXT_MESSAGE_CHUNK":
		if _, ok := raw["role"]; ok && !slices.Contains([]string{"developer", "system", "assistant", "user"}, ev.Role) {
			return invalid(ev.Type, "role %q is not developer, system, assistant or user", ev.Role)
		}
	case "REASONING_MESSAGE_START":
		if ev.Role != "reasoning" {
			return invalid(ev.Type, `role must be "reasoning"`)
		}
	case "REASONING_ENCRYPTED_VALUE":
		var s string
		_ = json.Unmarshal(raw["subtype"], &s)
		if s != "tool-call" && s != "message" {
			return invalid(ev.Type, `subtype must be "tool-call" or "message"`)
		}
	case "TOOL_CALL_RESULT":
		if _, ok := raw["role"]; ok && ev.Role != "tool" {
			return invalid(ev.Type, `role must be "tool"`)
		}
		if err := checkParts(ev.Content); err != nil {
			return invalid(ev.Type, "content: %v", err)
		}
	case "STATE_DELTA", "ACTIVITY_DELTA":
		name := "delta"
		if ev.Type == "ACTIVITY_DELTA" {
			name = "patch"
		}
		ops, err := decodePatch(raw[name])
		if err != nil {
			return invalid(ev.Type, "%s: %v", name, err)
		}
		ev.Patch = ops
	case "MESSAGES_SNAPSHOT":
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal(raw["messages"], &msgs); err != nil {
			return invalid(ev.Type, "messages must be objects")
		}
		for i, m := range msgs {
			if err := checkMessage(m); err != nil {
				return invalid(ev.Type, "message %d: %v", i+1, err)
			}
		}
	case "RUN_FINISHED":
		if o, ok := raw["outcome"]; ok {
			out, err := decodeOutcome(o)
			if err != nil {
				return invalid(ev.Type, "outcome: %v", err)
			}
			ev.Outcome = out
		}
	case "SUBAGENT_FINISHED":
		if o, ok := raw["outcome"]; ok {
			var t struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(o, &t); t.Type != "success" && t.Type != "suspended" {
				return invalid(ev.Type, `outcome type must be "success" or "suspended"`)
			}
		}
	}
	return nil
}

// describe names an event for messages: its type and, where it has one, its id.
func (ev event) describe() string {
	var ids []string
	for _, id := range []string{ev.MessageID, ev.ToolCallID} {
		if id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ev.Type
	}
	return ev.Type + " (" + strings.Join(ids, ", ") + ")"
}
