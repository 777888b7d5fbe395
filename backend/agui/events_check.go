package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// The checks of the objects events carry, field by field, as @ag-ui/core's schemas have them.

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
