package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// AskToolName is the tool through which agents that call tools ask the person: model-backed
// agents are offered it, and AG-UI agents get it as a frontend tool.
const AskToolName = "request_user_input"

// FieldSchema is the JSON Schema of one field of the question model.
var FieldSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":        map[string]any{"type": "string", "description": "Unique key of the answer, such as branch_name."},
		"label":       map[string]any{"type": "string"},
		"description": map[string]any{"type": "string"},
		"kind": map[string]any{"type": "string",
			"enum": []string{"text", "textarea", "number", "integer", "select", "multiselect", "boolean", "date", "file"}},
		"required": map[string]any{"type": "boolean"},
		"options": map[string]any{"type": "array", "items": map[string]any{
			"type":       "object",
			"properties": map[string]any{"value": map[string]any{"type": "string"}, "label": map[string]any{"type": "string"}},
			"required":   []string{"value"},
		}},
		"default":   map[string]any{"description": "Prefilled answer: a string, number or boolean, or a list of strings for multiselect."},
		"min":       map[string]any{"type": "number"},
		"max":       map[string]any{"type": "number"},
		"minLength": map[string]any{"type": "integer"},
		"maxLength": map[string]any{"type": "integer"},
		"pattern":   map[string]any{"type": "string"},
		"minItems":  map[string]any{"type": "integer"},
		"maxItems":  map[string]any{"type": "integer"},
	},
	"required": []string{"name", "kind"},
}

// AskToolSchema is the JSON Schema of request_user_input's arguments, as model-backed and
// AG-UI agents are offered the tool.
var AskToolSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"prompt": map[string]any{"type": "string", "description": "The question, as the person will read it."},
		"context": map[string]any{"type": "object",
			"description": "Supporting data. For a selection, the choices go in context.options."},
		"request_type": map[string]any{"type": "string", "enum": []string{"clarification", "selection", "approval"}},
		"fields": map[string]any{"type": "array", "items": FieldSchema,
			"description": "Optional: the form's fields, when the request type's default form does not fit."},
	},
	"required": []string{"prompt", "request_type"},
}

// AskToolDescription says when to use the tool.
const AskToolDescription = "Ask the person a question through a form and wait for the answer. " +
	"Use it only when you cannot continue without the person's input."

// DecodeUserInputRequest reads request_user_input's arguments, telling the model in its own terms
// what is wrong. Fields are read the way ParseUserInputMetaData reads input_fields (type
// aliases, options as strings or objects, numbers written as text), with "kind" or "type"
// naming the field kind.
func DecodeUserInputRequest(args string) (UserInputRequest, error) {
	var check any
	if err := json.Unmarshal([]byte(args), &check); err != nil {
		return UserInputRequest{}, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		return UserInputRequest{}, errors.New("the arguments must be a JSON object")
	}
	var req UserInputRequest
	if err := json.Unmarshal(m["prompt"], &req.Prompt); err != nil && m["prompt"] != nil {
		return UserInputRequest{}, errors.New("prompt must be a string")
	}
	if req.Prompt = strings.TrimSpace(req.Prompt); req.Prompt == "" {
		return UserInputRequest{}, errors.New("prompt is required")
	}
	if raw, ok := m["request_type"]; ok && json.Unmarshal(raw, &req.RequestType) != nil {
		return UserInputRequest{}, errors.New(`request_type must be "clarification", "selection" or "approval"`)
	}
	if raw, ok := m["context"]; ok {
		var ctx any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		_ = dec.Decode(&ctx) // raw is valid JSON: checked above
		req.Context = ctx
	}
	if raw, ok := m["fields"]; ok && string(raw) != "null" {
		var fields []map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&fields); err != nil {
			return UserInputRequest{}, errors.New("fields must be a list of objects")
		}
		if len(fields) > 0 {
			f, err := decodeFields(fields)
			if err != nil {
				return UserInputRequest{}, err
			}
			req.Fields = f
		}
	}
	return req, nil
}

// decodeFields reads the fields through ParseUserInputMetaData, so that both formats a
// model may use to ask are read alike.
func decodeFields(raw []map[string]any) ([]Field, error) {
	fields := make([]map[string]any, len(raw))
	for i, f := range raw {
		m := make(map[string]any, len(f)+1)
		for k, v := range f {
			m[k] = v
		}
		if kind, ok := f["kind"]; ok {
			m["type"] = kind
		}
		fields[i] = m
	}
	doc := map[string]any{"require_user_input": true, "content": "", "metadata": map[string]any{"input_fields": fields}}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("fields cannot be read: %v", err)
	}
	if q, ok := ParseUserInputMetaData(UserInputMetaDataPrefix + " " + string(b)); ok {
		return q.Fields, nil
	}
	// Say why, naming the field where the question model's check can.
	seen := map[string]bool{}
	for i, f := range raw {
		name, _ := f["name"].(string)
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			return nil, fmt.Errorf("field %d has no name", i+1)
		case seen[name]:
			return nil, fmt.Errorf("field name %q is used twice", name)
		}
		seen[name] = true
	}
	return nil, errors.New("fields cannot be read: each needs a unique name, a kind, and limits with the minimum below the maximum")
}

// toolResultDoc is the tool result the model gets for a question: how it ended, the typed
// answers, why it was not answered, and which fields Parley left out.
type toolResultDoc struct {
	Outcome string         `json:"outcome"`
	Values  map[string]any `json:"values,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Note    string         `json:"note,omitempty"`
}

// ToolResult writes the result of the question asked for a tool call: compact JSON such as
// {"outcome":"answered","values":{"choice":"b"}} or {"outcome":"declined","reason":"..."}.
// q is nil when the step stopped before asking; res is nil while the question is pending.
func ToolResult(q *Question, res *Resolution) string {
	switch {
	case q == nil:
		return MarshalCompact(toolResultDoc{Outcome: "not_asked", Reason: "The question was never shown to the person; ask again if you still need it."})
	case res == nil:
		return MarshalCompact(toolResultDoc{Outcome: "unanswered", Reason: "The person has not answered yet."})
	}
	doc := toolResultDoc{Outcome: string(res.Outcome), Reason: res.Reason}
	if res.Outcome == Answered {
		doc.Values = res.Values
		if doc.Values == nil {
			doc.Values = map[string]any{}
		}
		doc.Note = q.DeclineReason()
	}
	return MarshalCompact(doc)
}

// MarshalCompact writes v as compact JSON without HTML escaping (agents read it, not browsers).
func MarshalCompact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `{"error":"unencodable result"}`
	}
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}
