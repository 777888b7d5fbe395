package domain

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaQuestion maps a requested schema (MCP's restricted JSON Schema: an object of flat
// properties, as MCP elicitations and AG-UI interrupts ask with) onto q's fields; refusal
// says why Parley will not ask it:
//
//   - string: text (textarea above 200 characters), with minLength, maxLength and pattern;
//     format date is a date, date-time, uri and email (email only if allowEmail) a text
//     field of that format;
//   - string with enum (titles from enumNames) or oneOf of const and title: a select;
//   - number and integer, with minimum and maximum; boolean;
//   - array of such enum or anyOf items: a multiselect, with minItems and maxItems;
//   - default prefills; required is required.
//
// A field Parley must not ask (a secret, an email address without allowEmail) or cannot
// show is left out when it is optional: the question lists it in Refused, with the reason
// the person sees, and the answer goes back without it. A required one refuses the whole
// form, as does a form with nothing left to ask: half of what the server requires would
// not do. The fields come required first, in the order of "required", then the others by
// name (a decoded schema keeps no order of its own).
//
// With opts.Objects, an object property is a JSON textarea checked against the property's
// own schema (AG-UI's approve-with-edits: the edited arguments of a call); MCP forms have
// no objects.
func SchemaQuestion(q Question, schema json.RawMessage, opts SchemaOptions) (Question, string) {
	q.Fields, q.Refused = []Field{}, nil
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if len(schema) > 0 && string(schema) != "null" {
		if err := json.Unmarshal(schema, &s); err != nil {
			return q, "Parley cannot show this form: its schema is not an object of simple fields."
		}
	}
	if s.Type != "" && s.Type != "object" {
		return q, fmt.Sprintf("Parley cannot show this form: it asks for a %s, not an object of fields.", s.Type)
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	rank := func(n string) int {
		if i := slices.Index(s.Required, n); i >= 0 {
			return i
		}
		return len(s.Required)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank(names[i]), rank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		f, no := formField(name, s.Properties[name], opts)
		f.Required = slices.Contains(s.Required, name)
		if no.why == "" {
			no.why = Refusal(f) // a name or label that names a secret
		}
		if no.why != "" {
			if f.Required {
				return q, no.refusal(name)
			}
			q.Refused = append(q.Refused, RefusedField{Name: name, Reason: no.why})
			continue
		}
		q.Fields = append(q.Fields, f)
	}
	if len(q.Fields) == 0 && len(q.Refused) > 0 {
		return q, "Parley declined this form: it left out every field. " + q.DeclineReason()
	}
	if len(q.Fields) == 0 {
		// A confirmation: nothing to fill in, Submit accepts.
		q.SubmitLabel = "Accept"
	}
	if err := q.Check(); err != nil {
		return q, fmt.Sprintf("Parley cannot show this form: %v.", err)
	}
	return q, ""
}

// notAsked is why Parley will not ask a field: why, shown to the person and told to the
// server's caller; cannot, what the field is when Parley's forms cannot show it (else it
// is something Parley must not collect: a secret, an email address).
type notAsked struct {
	why    string
	cannot string
}

// refusal is the reason a whole form is refused for a required field it will not ask.
func (n notAsked) refusal(name string) string {
	if n.cannot != "" {
		return fmt.Sprintf("Parley cannot show this form: the required field %q is %s.", name, n.cannot)
	}
	return fmt.Sprintf("Parley declined this form: the required field %q cannot be asked. %s", name, n.why)
}

// formField maps one property, or says why it is not asked.
func formField(name string, p map[string]any, opts SchemaOptions) (Field, notAsked) {
	f := Field{Name: name, Label: str(p["title"]), Description: str(p["description"]), Default: p["default"]}
	cannot := func(what string) (Field, notAsked) {
		return f, notAsked{why: "Parley's forms cannot show it: it is " + what + ".", cannot: what}
	}
	forbidden := func(why string) (Field, notAsked) {
		return f, notAsked{why: why}
	}
	for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "const", "not", "allOf", "if", "$ref", "uniqueItems"} {
		if _, ok := p[k]; ok {
			return cannot(fmt.Sprintf("limited by %q, which Parley's forms cannot check", k))
		}
	}
	if b, _ := p["writeOnly"].(bool); b {
		return forbidden("It is write-only, as secrets are. " + SecretRefusal)
	}
	typ := str(p["type"])
	switch typ {
	case "string":
		if opts, ok := schemaOptions(p); ok {
			f.Kind, f.Options = KindSelect, opts
			return f, notAsked{}
		}
		if p["enum"] != nil || p["oneOf"] != nil || p["anyOf"] != nil {
			return cannot("a choice among values that are not all strings")
		}
		f.Kind = KindText
		f.MinLength, f.MaxLength, f.Pattern = intPtr(p["minLength"]), intPtr(p["maxLength"]), str(p["pattern"])
		switch format := str(p["format"]); format {
		case "":
			if f.MaxLength != nil && *f.MaxLength > 200 {
				f.Kind = KindTextarea
			}
		case "date":
			f.Kind, f.MinLength, f.MaxLength, f.Pattern = KindDate, nil, nil, ""
		case "date-time":
			f.Format = FormatDateTime
			if f.Description == "" {
				f.Description = "Date and time in UTC."
			}
		case "uri":
			f.Format = FormatURI
		case "email":
			if !opts.AllowEmail {
				return forbidden(EmailRefusal + " (The operator can allow it with allow_email.)")
			}
			f.Format = FormatEmail
		case "password":
			return forbidden("It is a password. " + SecretRefusal)
		default:
			return cannot(fmt.Sprintf("a string of the format %q", format))
		}
	case "number", "integer":
		f.Kind = KindNumber
		if typ == "integer" {
			f.Kind = KindInteger
		}
		f.Min, f.Max = floatPtr(p["minimum"]), floatPtr(p["maximum"])
	case "boolean":
		f.Kind = KindBoolean
	case "array":
		items, _ := p["items"].(map[string]any)
		opts, ok := schemaOptions(items)
		if !ok {
			return cannot("a list of something other than choices")
		}
		f.Kind, f.Options = KindMultiselect, opts
		f.MinItems, f.MaxItems = intPtr(p["minItems"]), intPtr(p["maxItems"])
	case "object":
		if !opts.Objects {
			return cannot(`of the type "object"`)
		}
		f.Kind, f.Format = KindTextarea, FormatJSON
		f.Schema, _ = json.Marshal(p)
		if f.Default != nil {
			b, _ := json.MarshalIndent(f.Default, "", "  ")
			f.Default = string(b)
		}
	case "":
		return cannot("without a type")
	default:
		return cannot(fmt.Sprintf("of the type %q", typ))
	}
	return f, notAsked{}
}

// schemaOptions reads the choices of a single-select string (enum, with enumNames as titles, or
// oneOf/anyOf of const and title); ok is false when there are none.
func schemaOptions(p map[string]any) ([]Option, bool) {
	if p == nil {
		return nil, false
	}
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		titles, _ := p["enumNames"].([]any)
		out := make([]Option, 0, len(enum))
		for i, v := range enum {
			sv, ok := v.(string)
			if !ok {
				return nil, false // a choice of numbers would come back as text
			}
			o := Option{Value: sv}
			if i < len(titles) {
				o.Label = str(titles[i])
			}
			out = append(out, o)
		}
		return out, true
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		list, ok := p[key].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		out := make([]Option, 0, len(list))
		for _, item := range list {
			m, _ := item.(map[string]any)
			c, ok := m["const"].(string)
			if !ok {
				return nil, false
			}
			out = append(out, Option{Value: c, Label: str(m["title"])})
		}
		return out, true
	}
	return nil, false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func floatPtr(v any) *float64 {
	if f, ok := v.(float64); ok {
		return &f
	}
	return nil
}

func intPtr(v any) *int {
	if f, ok := v.(float64); ok && f >= 0 && f == float64(int(f)) {
		n := int(f)
		return &n
	}
	return nil
}

// SchemaOptions says what SchemaQuestion may ask beyond MCP's flat fields.
type SchemaOptions struct {
	// AllowEmail asks for email addresses, which Parley otherwise refuses.
	AllowEmail bool
	// Objects asks for an object property as JSON.
	Objects bool
}

// CheckSchema validates content (typed answers, as JSON has them) against a requested schema.
func CheckSchema(schema json.RawMessage, content map[string]any) error {
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	return rs.Validate(content)
}

// SchemaAnswer is the answer to a form asked by a requested schema (an MCP or ACP
// elicitation), as those protocols take it: "accept" with the person's typed values
// (checked against the schema first), "decline", or "cancel" for a question cancelled,
// expired or set aside by a new message.
func SchemaAnswer(schema json.RawMessage, res Resolution) (action string, content map[string]any, err error) {
	switch res.Outcome {
	case Answered:
	case Declined:
		return "decline", nil, nil
	default:
		return "cancel", nil, nil
	}
	// Typed values as JSON has them (int64 stays an integer, []string a list).
	content = map[string]any{}
	b, err := json.Marshal(res.Values)
	if err != nil {
		return "", nil, err
	}
	if err := json.Unmarshal(b, &content); err != nil {
		return "", nil, err
	}
	if err := CheckSchema(schema, content); err != nil {
		return "", nil, fmt.Errorf("the answer does not fit the form that was asked: %w", err)
	}
	return "accept", content, nil
}
