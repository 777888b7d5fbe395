package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
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
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return event{}, invalid("", "not a JSON object: %.80q", data)
	}
	var ev event
	if err := json.Unmarshal(raw["type"], &ev.Type); err != nil || ev.Type == "" {
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
	ev.Content, ev.Snapshot = raw["content"], raw["snapshot"]
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

// plainString reads a JSON string without escapes, the common case, without allocating a
// decoder's state.
func plainString(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 || bytes.IndexByte(v[1:len(v)-1], '"') >= 0 {
		return "", false
	}
	return string(v[1 : len(v)-1]), utf8.Valid(v)
}

// checkKind reports what v is when it is not of kind k.
func checkKind(v json.RawMessage, k kind) error {
	v = bytes.TrimSpace(v)
	got := "null"
	switch {
	case len(v) == 0:
		got = "nothing"
	case v[0] == '"':
		got = "a string"
	case v[0] == '{':
		got = "an object"
	case v[0] == '[':
		got = "an array"
	case v[0] == 't' || v[0] == 'f':
		got = "a boolean"
	case v[0] != 'n':
		got = "a number"
	}
	ok := false
	switch k {
	case kString:
		ok = got == "a string"
	case kBool:
		ok = got == "a boolean"
	case kObject:
		ok = got == "an object"
	case kArray:
		ok = got == "an array"
	case kStringOrArray:
		ok = got == "a string" || got == "an array"
	case kInt:
		var n json.Number
		if got == "a number" && json.Unmarshal(v, &n) == nil {
			if _, err := n.Int64(); err == nil {
				ok = true
			} else {
				got = "a fraction"
			}
		}
	case kValue:
		ok = got != "null" && got != "nothing"
	case kNullable:
		ok = got != "nothing"
	}
	if ok {
		return nil
	}
	return fmt.Errorf("%s", got)
}

// checkFields checks an object of the protocol's (a message, an interrupt, a part) against
// its fields.
func checkFields(m map[string]json.RawMessage, fields ...field) error {
	for _, f := range fields {
		v, ok := m[f.name]
		if !ok {
			if f.required {
				return fmt.Errorf("%s is required", f.name)
			}
			continue
		}
		if err := checkKind(v, f.kind); err != nil {
			return fmt.Errorf("%s must be %s, not %s", f.name, f.kind, err)
		}
	}
	return nil
}

// checkParts checks a tool result's or a message's content given as parts.
func checkParts(content json.RawMessage) error {
	if checkKind(content, kArray) != nil {
		return nil
	}
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(content, &parts); err != nil {
		return fmt.Errorf("parts must be objects")
	}
	for i, p := range parts {
		var typ string
		_ = json.Unmarshal(p["type"], &typ)
		var err error
		switch typ {
		case "text":
			err = checkFields(p, req("text", kString), opt("id", kString), opt("metadata", kValue))
		case "image", "audio", "video", "document":
			err = checkFields(p, req("source", kObject), opt("id", kString), opt("metadata", kValue))
		default:
			err = fmt.Errorf("type %q is not text, image, audio, video or document", typ)
		}
		if err != nil {
			return fmt.Errorf("part %d: %v", i+1, err)
		}
	}
	return nil
}

// checkMessage checks one message of a snapshot.
func checkMessage(m map[string]json.RawMessage) error {
	var role string
	_ = json.Unmarshal(m["role"], &role)
	base := []field{req("id", kString), opt("subagentRunId", kString), opt("metadata", kObject), opt("encryptedValue", kString)}
	switch role {
	case "developer", "system":
		return checkFields(m, append(base, req("content", kString), opt("name", kString))...)
	case "assistant":
		return checkFields(m, append(base, opt("content", kString), opt("name", kString), opt("toolCalls", kArray))...)
	case "user":
		if err := checkFields(m, append(base, req("content", kStringOrArray), opt("name", kString))...); err != nil {
			return err
		}
		return checkParts(m["content"])
	case "tool":
		if err := checkFields(m, append(base, req("content", kStringOrArray), req("toolCallId", kString), opt("error", kString))...); err != nil {
			return err
		}
		return checkParts(m["content"])
	case "activity":
		return checkFields(m, req("id", kString), req("activityType", kString), req("content", kObject), opt("metadata", kObject))
	case "reasoning":
		return checkFields(m, append(base, req("content", kString))...)
	}
	return fmt.Errorf("role %q is not a message role", role)
}

// decodeOutcome checks and decodes a RUN_FINISHED outcome.
func decodeOutcome(raw json.RawMessage) (*outcome, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not an object")
	}
	var out outcome
	_ = json.Unmarshal(m["type"], &out.Type)
	switch out.Type {
	case "success":
		if err := checkFields(m, opt("pendingToolCallIds", kArray)); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(orEmpty(m["pendingToolCallIds"]), &out.Pending); err != nil {
			return nil, fmt.Errorf("pendingToolCallIds must be strings")
		}
	case "cancelled":
	case "interrupt":
		if err := checkFields(m, req("interrupts", kArray)); err != nil {
			return nil, err
		}
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(m["interrupts"], &list); err != nil {
			return nil, fmt.Errorf("interrupts must be objects")
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("interrupts must hold at least one interrupt")
		}
		seen := map[string]bool{}
		for i, it := range list {
			if err := checkFields(it, req("id", kString), req("reason", kString), opt("message", kString),
				opt("toolCallId", kString), opt("responseSchema", kObject), opt("expiresAt", kString),
				opt("metadata", kObject), opt("subagentRunId", kString)); err != nil {
				return nil, fmt.Errorf("interrupt %d: %v", i+1, err)
			}
			var in interrupt
			b, _ := json.Marshal(it)
			_ = json.Unmarshal(b, &in)
			if seen[in.ID] {
				return nil, fmt.Errorf("interrupt id %q is used twice", in.ID)
			}
			seen[in.ID] = true
			out.Interrupts = append(out.Interrupts, in)
		}
	default:
		return nil, fmt.Errorf("type %q is not success, interrupt or cancelled", out.Type)
	}
	return &out, nil
}

func orEmpty(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// pointer is a JSON Pointer (RFC 6901), as @ag-ui/core checks it.
var pointer = regexp.MustCompile(`^(/([^/~]|~[01])*)*$`)

// decodePatch checks and decodes an RFC 6902 patch.
func decodePatch(raw json.RawMessage) ([]patchOp, error) {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("operations must be objects")
	}
	ops := make([]patchOp, 0, len(list))
	for i, m := range list {
		var op patchOp
		_ = json.Unmarshal(m["op"], &op.Op)
		fields := []field{req("path", kString)}
		switch op.Op {
		case "add", "replace", "test":
			fields = append(fields, req("value", kNullable))
		case "move", "copy":
			fields = append(fields, req("from", kString))
		case "remove":
		default:
			return nil, fmt.Errorf("operation %d: op %q is not add, remove, replace, move, copy or test", i+1, op.Op)
		}
		if err := checkFields(m, fields...); err != nil {
			return nil, fmt.Errorf("operation %d: %v", i+1, err)
		}
		_ = json.Unmarshal(m["path"], &op.Path)
		_ = json.Unmarshal(orEmpty(m["from"]), &op.From)
		op.Value = m["value"]
		for _, p := range []string{op.Path, op.From} {
			if !pointer.MatchString(p) {
				return nil, fmt.Errorf("operation %d: %q is not a JSON Pointer", i+1, p)
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
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
