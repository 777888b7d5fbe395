package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/agent"
)

// Input is a server's request for input, as Parley puts it to the person: a form (Question
// has the fields), or a URL to open (Question.Link). Refusal is set when Parley declines
// the request itself, saying why (a form it cannot show, one that asks for a secret).
type Input struct {
	ID            string          `json:"id"`
	Mode          string          `json:"mode"`
	Question      agent.Question  `json:"question"`
	Refusal       string          `json:"refusal,omitempty"`
	ElicitationID string          `json:"elicitation_id,omitempty"`
	Schema        json.RawMessage `json:"schema,omitempty"`
}

// Asker is who asks a server's question, as the card shows it: the spec requires that the
// person sees which server asks.
func Asker(server string) string { return "Tool server “" + server + "”" }

// input maps one input request of the server.
func (s *server) input(id string, ir sdk.InputRequest) Input {
	p, ok := ir.(*sdk.ElicitParams)
	if !ok {
		return Input{ID: id, Mode: "other", Refusal: fmt.Sprintf("The server asked for %s, which Parley does not offer tool servers.", inputKind(ir))}
	}
	in := Input{ID: id, Mode: p.Mode, ElicitationID: p.ElicitationID}
	if in.Mode == "" {
		in.Mode = "form"
		if p.URL != "" {
			in.Mode = "url"
		}
	}
	switch in.Mode {
	case "url":
		q, refusal := urlQuestion(s.cfg.Name, p)
		in.Question, in.Refusal = q, refusal
	case "form":
		if b, err := json.Marshal(p.RequestedSchema); err == nil {
			in.Schema = b
		}
		q, refusal := FormQuestion(s.cfg.Name, p.Message, in.Schema, s.cfg.AllowEmail)
		in.Question, in.Refusal = q, refusal
	default:
		in.Refusal = fmt.Sprintf("The server asked in the mode %q, which Parley does not know.", p.Mode)
	}
	return in
}

func inputKind(ir sdk.InputRequest) string {
	switch ir.(type) {
	case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
		return "a completion of the model (sampling)"
	case *sdk.ListRootsParams:
		return "the list of roots"
	}
	return fmt.Sprintf("%T", ir)
}

// urlQuestion asks the person to open a URL: the server, the whole URL and why are shown,
// and the page opens only on their click.
func urlQuestion(server string, p *sdk.ElicitParams) (agent.Question, string) {
	if _, ok := agent.WebURL(p.URL); !ok {
		return agent.Question{}, fmt.Sprintf("The server sent the address %q to open, which is not a web address.", p.URL)
	}
	msg := strings.TrimSpace(p.Message)
	if msg == "" {
		msg = "The tool server asks you to open a page."
	}
	return agent.Question{Asker: Asker(server), Message: msg, Link: p.URL, Fields: []agent.Field{}, AllowCancel: true,
		SubmitLabel: "I have finished there"}, ""
}

// FormQuestion maps a form's requested schema (MCP's restricted JSON Schema: an object of
// flat properties) onto the question model; refusal says why Parley will not ask it:
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
func FormQuestion(server, message string, schema json.RawMessage, allowEmail bool) (agent.Question, string) {
	q := agent.Question{Asker: Asker(server), Message: strings.TrimSpace(message), AllowCancel: true, Fields: []agent.Field{}}
	if q.Message == "" {
		q.Message = "The tool server asks for the following."
	}
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
		f, no := formField(name, s.Properties[name], allowEmail)
		f.Required = slices.Contains(s.Required, name)
		if no.why == "" {
			no.why = agent.Refusal(f) // a name or label that names a secret
		}
		if no.why != "" {
			if f.Required {
				return q, no.refusal(name)
			}
			q.Refused = append(q.Refused, agent.RefusedField{Name: name, Reason: no.why})
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
func formField(name string, p map[string]any, allowEmail bool) (agent.Field, notAsked) {
	f := agent.Field{Name: name, Label: str(p["title"]), Description: str(p["description"]), Default: p["default"]}
	cannot := func(what string) (agent.Field, notAsked) {
		return f, notAsked{why: "Parley's forms cannot show it: it is " + what + ".", cannot: what}
	}
	forbidden := func(why string) (agent.Field, notAsked) {
		return f, notAsked{why: why}
	}
	for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "const", "not", "allOf", "if", "$ref", "uniqueItems"} {
		if _, ok := p[k]; ok {
			return cannot(fmt.Sprintf("limited by %q, which Parley's forms cannot check", k))
		}
	}
	if b, _ := p["writeOnly"].(bool); b {
		return forbidden("It is write-only, as secrets are. " + agent.SecretRefusal)
	}
	typ := str(p["type"])
	switch typ {
	case "string":
		if opts, ok := options(p); ok {
			f.Kind, f.Options = agent.KindSelect, opts
			return f, notAsked{}
		}
		if p["enum"] != nil || p["oneOf"] != nil || p["anyOf"] != nil {
			return cannot("a choice among values that are not all strings")
		}
		f.Kind = agent.KindText
		f.MinLength, f.MaxLength, f.Pattern = intPtr(p["minLength"]), intPtr(p["maxLength"]), str(p["pattern"])
		switch format := str(p["format"]); format {
		case "":
			if f.MaxLength != nil && *f.MaxLength > 200 {
				f.Kind = agent.KindTextarea
			}
		case "date":
			f.Kind, f.MinLength, f.MaxLength, f.Pattern = agent.KindDate, nil, nil, ""
		case "date-time":
			f.Format = agent.FormatDateTime
			if f.Description == "" {
				f.Description = "Date and time in UTC."
			}
		case "uri":
			f.Format = agent.FormatURI
		case "email":
			if !allowEmail {
				return forbidden(agent.EmailRefusal + " (The operator can allow it for this server with allow_email.)")
			}
			f.Format = agent.FormatEmail
		case "password":
			return forbidden("It is a password. " + agent.SecretRefusal)
		default:
			return cannot(fmt.Sprintf("a string of the format %q", format))
		}
	case "number", "integer":
		f.Kind = agent.KindNumber
		if typ == "integer" {
			f.Kind = agent.KindInteger
		}
		f.Min, f.Max = floatPtr(p["minimum"]), floatPtr(p["maximum"])
	case "boolean":
		f.Kind = agent.KindBoolean
	case "array":
		items, _ := p["items"].(map[string]any)
		opts, ok := options(items)
		if !ok {
			return cannot("a list of something other than choices")
		}
		f.Kind, f.Options = agent.KindMultiselect, opts
		f.MinItems, f.MaxItems = intPtr(p["minItems"]), intPtr(p["maxItems"])
	case "":
		return cannot("without a type")
	default:
		return cannot(fmt.Sprintf("of the type %q", typ))
	}
	return f, notAsked{}
}

// options reads the choices of a single-select string (enum, with enumNames as titles, or
// oneOf/anyOf of const and title); ok is false when there are none.
func options(p map[string]any) ([]agent.Option, bool) {
	if p == nil {
		return nil, false
	}
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		titles, _ := p["enumNames"].([]any)
		out := make([]agent.Option, 0, len(enum))
		for i, v := range enum {
			sv, ok := v.(string)
			if !ok {
				return nil, false // a choice of numbers would come back as text
			}
			o := agent.Option{Value: sv}
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
		out := make([]agent.Option, 0, len(list))
		for _, item := range list {
			m, _ := item.(map[string]any)
			c, ok := m["const"].(string)
			if !ok {
				return nil, false
			}
			out = append(out, agent.Option{Value: c, Label: str(m["title"])})
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

// Respond is the answer sent back for an input request: accept with the person's typed
// answers (checked against the requested schema first), decline with nothing, cancel for
// a question cancelled, expired or set aside by a new message.
func Respond(in Input, res agent.Resolution) (Response, error) {
	switch res.Outcome {
	case agent.Answered:
	case agent.Declined:
		return Response{Action: "decline"}, nil
	default:
		return Response{Action: "cancel"}, nil
	}
	if in.Mode != "form" {
		return Response{Action: "accept"}, nil
	}
	// Typed values as JSON has them (int64 stays an integer, []string a list).
	content := map[string]any{}
	b, err := json.Marshal(res.Values)
	if err != nil {
		return Response{}, err
	}
	if err := json.Unmarshal(b, &content); err != nil {
		return Response{}, err
	}
	if err := checkSchema(in.Schema, content); err != nil {
		return Response{}, fmt.Errorf("the answer does not fit the form the server asked for: %w", err)
	}
	return Response{Action: "accept", Content: content}, nil
}

// checkSchema validates content against a requested schema.
func checkSchema(schema json.RawMessage, content map[string]any) error {
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

// sortInputs orders a round's requests by id, so that their questions come in a stable order.
func sortInputs(in []Input) {
	sort.Slice(in, func(i, j int) bool { return in[i].ID < in[j].ID })
}

// liveElicitation answers an elicitation/create sent in the middle of a call, the way of
// protocol revisions before 2026-07-28: the request is put to the person by the call it
// belongs to, which waits for the answer. The request does not say which call that is; the
// session it comes on does, since each call of such a server has a session of its own (see
// lease). A request that comes outside any call is cancelled (no person refused anything),
// and the log and the home page say which server asked.
func (s *server) liveElicitation(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	st := s.sessionOf(req.Session)
	var ask func(context.Context, Input) (Response, error)
	if st != nil && req.Params != nil {
		s.mu.Lock()
		if !s.perCallLocked(st) {
			// A server of a later revision that asks mid-call all the same: its calls get
			// sessions of their own from now on.
			s.askedLive = true
			s.log.Info("tool server asks in the middle of calls although it speaks a later revision; each call gets a session of its own", "protocol", st.protocol)
		}
		s.mu.Unlock()
		ask = st.only()
	}
	if ask == nil && st != nil && st.letGo() {
		// A call cut off before: the server goes on with it, and nobody waits for its answer.
		s.log.Debug("tool server asked for a call that was cut off; cancelled")
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	if ask == nil {
		s.mu.Lock()
		s.strayAsked = true
		s.mu.Unlock()
		s.log.Warn("tool server asked something Parley could not tie to one of its calls; cancelled")
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	in := s.input(fmt.Sprintf("live-%d", liveSeq.Add(1)), req.Params)
	r, err := ask(ctx, in)
	if err != nil {
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	return &sdk.ElicitResult{Action: r.Action, Content: r.Content}, nil
}

// liveSeq numbers the live requests, for their question keys.
var liveSeq atomic.Int64

// complete passes on the server's word that an interaction at a URL is complete.
func (s *server) complete(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	p := s.pool
	if req.Params == nil || p.onComplete == nil {
		return
	}
	key := s.cfg.Name + " " + req.Params.ElicitationID
	p.awaitMu.Lock()
	id, ok := p.awaiting[key]
	delete(p.awaiting, key)
	p.awaitMu.Unlock()
	if ok {
		p.onComplete(s.cfg.Name, id)
	}
}
