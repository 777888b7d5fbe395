package domain

import (
	"encoding/json"
	"strings"
	"unicode"
)

// UserInputMetaDataPrefix starts an agent message that asks for a form in the
// UserInputMetaData format, the convention several agent platforms already use.
const UserInputMetaDataPrefix = "UserInputMetaData:"

// Kinds a model may ask for that Parley keeps only so that RefuseSecrets can see and remove them.
const (
	kindPassword FieldKind = "password"
	kindEmail    FieldKind = "email"
)

// kindAliases maps the type names models write in practice onto the field kinds.
var kindAliases = map[string]FieldKind{
	"string": KindText, "input": KindText, "url": KindText,
	"long_text": KindTextarea, "multiline": KindTextarea, "text_area": KindTextarea,
	"float": KindNumber, "decimal": KindNumber, "numeric": KindNumber,
	"int":  KindInteger,
	"bool": KindBoolean, "checkbox": KindBoolean, "toggle": KindBoolean, "switch": KindBoolean,
	"dropdown": KindSelect, "enum": KindSelect, "radio": KindSelect,
	"multi_select": KindMultiselect, "multi-select": KindMultiselect, "checkboxes": KindMultiselect,
	"upload": KindFile, "attachment": KindFile,
	"password": kindPassword, "passwd": kindPassword, "secret": kindPassword,
	"email": kindEmail, "e-mail": kindEmail,
}

// metaDoc is the wire form of a UserInputMetaData message, loosely typed so that the
// small mistakes models make (a number as a string, "required": "yes") do not lose the form.
type metaDoc struct {
	RequireUserInput any         `json:"require_user_input"`
	Content          any         `json:"content"`
	Metadata         *metaBody   `json:"metadata"`
	InputFields      []metaField `json:"input_fields"` // some models leave out the "metadata" level
}

type metaBody struct {
	UserInput   any         `json:"user_input"`
	InputFields []metaField `json:"input_fields"`
}

type metaField struct {
	Name        string `json:"name"`
	Label       any    `json:"label"`
	Description any    `json:"description"`
	Type        any    `json:"type"`
	Required    any    `json:"required"`
	Options     any    `json:"options"`
	Default     any    `json:"default"`
	Min         any    `json:"min"`
	Max         any    `json:"max"`
	MinLength   any    `json:"minLength"`
	MaxLength   any    `json:"maxLength"`
	Pattern     any    `json:"pattern"`
	MinItems    any    `json:"minItems"`
	MaxItems    any    `json:"maxItems"`
}

// ParseUserInputMetaData reads an agent message in the UserInputMetaData format into a
// Question. It reports false when the message is not such a form (no prefix, broken JSON,
// no fields, a field without a name, duplicate names, require_user_input false): the caller
// then shows the whole text as an ordinary agent message. Password and email fields are
// kept with their raw kind; pass the result through RefuseSecrets before asking.
func ParseUserInputMetaData(text string) (Question, bool) {
	s := strings.TrimLeftFunc(text, unicode.IsSpace)
	if len(s) < len(UserInputMetaDataPrefix) || !strings.EqualFold(s[:len(UserInputMetaDataPrefix)], UserInputMetaDataPrefix) {
		return Question{}, false
	}
	s = stripFence(strings.TrimLeftFunc(s[len(UserInputMetaDataPrefix):], unicode.IsSpace))
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var doc metaDoc
	if err := dec.Decode(&doc); err != nil {
		return Question{}, false
	}
	if want, ok := asBool(doc.RequireUserInput); ok && !want {
		return Question{}, false
	}
	raw := doc.InputFields
	if doc.Metadata != nil && len(doc.Metadata.InputFields) > 0 {
		raw = doc.Metadata.InputFields
	}
	if len(raw) == 0 {
		return Question{}, false
	}
	content, _ := doc.Content.(string)
	q := Question{Message: strings.TrimSpace(content), Fields: make([]Field, 0, len(raw))}
	for _, mf := range raw {
		f := Field{
			Name:        mf.Name,
			Label:       strings.TrimSpace(asString(mf.Label)),
			Description: strings.TrimSpace(asString(mf.Description)),
			Kind:        normalizeKind(asString(mf.Type)),
			Options:     asOptions(mf.Options),
			Default:     cleanDefault(mf.Default),
			Min:         asFloat(mf.Min),
			Max:         asFloat(mf.Max),
			MinLength:   asCount(mf.MinLength),
			MaxLength:   asCount(mf.MaxLength),
			Pattern:     asString(mf.Pattern),
			MinItems:    asCount(mf.MinItems),
			MaxItems:    asCount(mf.MaxItems),
		}
		f.Required, _ = asBool(mf.Required)
		q.Fields = append(q.Fields, normalizeField(f))
	}
	if q.check(true) != nil {
		return Question{}, false
	}
	return q, true
}

// stripFence removes an opening Markdown code fence (```json) in front of the JSON; the
// closing fence is trailing text, which the decoder never reads.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimLeftFunc(s[3:], func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
	return strings.TrimLeftFunc(s, unicode.IsSpace)
}

// normalizeKind maps a type name onto a field kind: aliases are resolved, password and
// email kept raw for RefuseSecrets, anything else unknown becomes text.
func normalizeKind(name string) FieldKind {
	k := FieldKind(strings.ToLower(strings.TrimSpace(name)))
	if k.Valid() {
		return k
	}
	if alias, ok := kindAliases[string(k)]; ok {
		return alias
	}
	return KindText
}

// KnownKind reports whether a type name names a field kind Parley has (an alias included,
// and password and email, which RefuseSecrets refuses with a reason), rather than one that
// would be read as text.
func KnownKind(name string) bool {
	k := FieldKind(strings.ToLower(strings.TrimSpace(name)))
	_, alias := kindAliases[string(k)]
	return k.Valid() || alias || k == kindPassword || k == kindEmail
}

// normalizeField tidies a field from an agent: trimmed name, known kind, clean options,
// and a select without options turned into a text field the person can still fill in.
func normalizeField(f Field) Field {
	f.Name = strings.TrimSpace(f.Name)
	f.Kind = normalizeKind(string(f.Kind))
	f.Options = cleanOptions(f.Options)
	if (f.Kind == KindSelect || f.Kind == KindMultiselect) && len(f.Options) == 0 {
		f.Kind = KindText
	}
	return f
}

// cleanOptions trims values, drops options without a value and repeated values.
func cleanOptions(opts []Option) []Option {
	if len(opts) == 0 {
		return nil
	}
	out := make([]Option, 0, len(opts))
	seen := make(map[string]bool, len(opts))
	for _, o := range opts {
		o.Value = strings.TrimSpace(o.Value)
		o.Label = strings.TrimSpace(o.Label)
		if o.Value == "" || seen[o.Value] {
			continue
		}
		seen[o.Value] = true
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// asOptions reads options written as strings, numbers, or objects with value and label.
func asOptions(v any) []Option {
	list, _ := v.([]any)
	var out []Option
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			value := firstScalar(m, "value", "id", "name", "label", "title")
			out = append(out, Option{Value: value, Label: firstScalar(m, "label", "title", "name", "text")})
			continue
		}
		if s, ok := scalarString(item); ok {
			out = append(out, Option{Value: s})
		}
	}
	for i := range out {
		if out[i].Label == out[i].Value {
			out[i].Label = ""
		}
	}
	return out
}

// FormatUserInputMetaData writes q in the UserInputMetaData format, for agents that speak it
// (A2A peers) and for teaching models the format. ParseUserInputMetaData reads it back.
func FormatUserInputMetaData(q Question) string {
	type outField struct {
		Name        string    `json:"name"`
		Label       string    `json:"label,omitempty"`
		Description string    `json:"description,omitempty"`
		Type        FieldKind `json:"type"`
		Required    bool      `json:"required"`
		Options     []any     `json:"options,omitempty"`
		Default     any       `json:"default,omitempty"`
		Min         *float64  `json:"min,omitempty"`
		Max         *float64  `json:"max,omitempty"`
		MinLength   *int      `json:"minLength,omitempty"`
		MaxLength   *int      `json:"maxLength,omitempty"`
		Pattern     string    `json:"pattern,omitempty"`
		MinItems    *int      `json:"minItems,omitempty"`
		MaxItems    *int      `json:"maxItems,omitempty"`
	}
	type outBody struct {
		UserInput   bool       `json:"user_input"`
		InputFields []outField `json:"input_fields"`
	}
	type outDoc struct {
		RequireUserInput bool    `json:"require_user_input"`
		Content          string  `json:"content"`
		Metadata         outBody `json:"metadata"`
	}
	doc := outDoc{RequireUserInput: true, Content: q.Message, Metadata: outBody{UserInput: true, InputFields: []outField{}}}
	for _, f := range q.Fields {
		of := outField{
			Name: f.Name, Label: f.Label, Description: f.Description, Type: f.Kind, Required: f.Required,
			Default: cleanDefault(f.Default), Min: finite(f.Min), Max: finite(f.Max),
			MinLength: f.MinLength, MaxLength: f.MaxLength, Pattern: f.Pattern, MinItems: f.MinItems, MaxItems: f.MaxItems,
		}
		for _, o := range f.Options {
			if o.Label == "" {
				of.Options = append(of.Options, o.Value)
			} else {
				of.Options = append(of.Options, o)
			}
		}
		doc.Metadata.InputFields = append(doc.Metadata.InputFields, of)
	}
	var b strings.Builder
	b.WriteString(UserInputMetaDataPrefix + " ")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	// Every value is a string, a finite number, a bool or a list of strings: Encode cannot fail.
	_ = enc.Encode(doc)
	return strings.TrimRight(b.String(), "\n")
}
