package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// ApprovalFields are the fields of a form that approves a call with its arguments: one
// field per argument, prefilled with the proposed value, when schema (the arguments' JSON
// Schema) maps onto simple fields that cover every argument; otherwise one field with the
// arguments as JSON to edit, checked against schema. Submit approves with the form as it
// holds (see ApprovedArguments); Decline rejects.
func ApprovalFields(schema, args json.RawMessage) []Field {
	var given map[string]any
	_ = json.Unmarshal(args, &given)
	if form, refusal := SchemaQuestion(Question{}, schema, SchemaOptions{AllowEmail: true}); refusal == "" && len(form.Refused) == 0 && fieldsCover(form.Fields, given) {
		fields := make([]Field, 0, len(form.Fields))
		for _, f := range form.Fields {
			if v, ok := given[f.Name]; ok {
				f.Default = v
			}
			fields = append(fields, f)
		}
		return fields
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, args, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(args)
	}
	return []Field{{Name: "arguments", Label: "Arguments (JSON)", Kind: KindTextarea, Required: true,
		Default: pretty.String(), Format: FormatJSON, Schema: schema}}
}

// ArgumentsSchema is a JSON Schema for arguments given without one: each top-level value's
// type (string, number, integer, boolean), or only "an object" when a value is anything
// else, so that ApprovalFields shows such arguments as JSON.
func ArgumentsSchema(args json.RawMessage) json.RawMessage {
	var given map[string]json.RawMessage
	if json.Unmarshal(args, &given) != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	props := map[string]any{}
	for name, raw := range given {
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		_ = d.Decode(&v)
		switch v := v.(type) {
		case string:
			props[name] = map[string]any{"type": "string"}
		case bool:
			props[name] = map[string]any{"type": "boolean"}
		case json.Number:
			if _, err := v.Int64(); err == nil {
				props[name] = map[string]any{"type": "integer"}
			} else {
				props[name] = map[string]any{"type": "number"}
			}
		default:
			return json.RawMessage(`{"type":"object"}`)
		}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}

// fieldsCover reports whether the form has a field for every argument given.
func fieldsCover(fields []Field, args map[string]any) bool {
	for name := range args {
		found := false
		for _, f := range fields {
			found = found || f.Name == name
		}
		if !found {
			return false
		}
	}
	return true
}

// ApprovedArguments are the arguments the person approved, from their answers to a form
// of ApprovalFields: an optional yes/no left out of the proposal and left at no stays out,
// and arguments the same as proposed keep the proposal's bytes.
func ApprovedArguments(q *Question, res *Resolution, proposed json.RawMessage) (json.RawMessage, error) {
	var approved []byte
	if len(q.Fields) == 1 && q.Fields[0].Format == FormatJSON {
		s, _ := res.Values[q.Fields[0].Name].(string)
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(s)); err != nil {
			return nil, fmt.Errorf("the approved arguments are not JSON: %v", err)
		}
		approved = compact.Bytes()
	} else {
		var before map[string]any
		_ = json.Unmarshal(proposed, &before)
		args := map[string]any{}
		for _, f := range q.Fields {
			v, ok := res.Values[f.Name]
			if !ok {
				continue
			}
			if _, given := before[f.Name]; !given && f.Kind == KindBoolean && v == false {
				continue
			}
			args[f.Name] = v
		}
		var err error
		if approved, err = json.Marshal(args); err != nil {
			return nil, err
		}
	}
	if SameJSON(approved, proposed) {
		return proposed, nil
	}
	return approved, nil
}

// SameJSON reports whether two JSON texts hold the same value (numbers compared as written).
func SameJSON(a, b []byte) bool {
	decode := func(raw []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	va, okA := decode(a)
	vb, okB := decode(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}
