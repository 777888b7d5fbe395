package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/agent"
)

// question turns one tool call into the question to ask, or says what the model must fix.
func (a *Agent) question(c toolCall, t turn) (agent.Question, error) {
	if c.Name != toolName || !a.cfg.AllowQuestions {
		switch names := a.toolNames(t); len(names) {
		case 0:
			return agent.Question{}, fmt.Errorf("there is no tool %q; you have no tools here, answer in text", c.Name)
		case 1:
			return agent.Question{}, fmt.Errorf("there is no tool %q; the only tool is %s", c.Name, names[0])
		default:
			return agent.Question{}, fmt.Errorf("there is no tool %q; the tools are %s", c.Name, strings.Join(names, " and "))
		}
	}
	req, err := decodeRequest(c.Arguments)
	if err != nil {
		return agent.Question{}, err
	}
	q := req.Question()
	q.Key = c.ID
	q.Asker = a.info.Title
	// The runner refuses secret fields and checks the rest; a question it would reject is
	// one the model can correct. A question of nothing but secrets is one too: asking it
	// would be declined at once, and the model would ask again.
	refused := agent.RefuseSecrets(q)
	if len(refused.Fields) == 0 && len(refused.Refused) > 0 {
		return agent.Question{}, fmt.Errorf("the question asks only for secrets, which Parley never collects by form (%s); ask for something else, or tell the person to use the service's own sign-in", refusedNames(refused.Refused))
	}
	if err := refused.Check(); err != nil {
		return agent.Question{}, fmt.Errorf("the question cannot be shown: %v", err)
	}
	return q, nil
}

func refusedNames(r []agent.RefusedField) string {
	names := make([]string, len(r))
	for i, f := range r {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// decodeRequest reads request_user_input's arguments, telling the model in its own terms
// what is wrong. Fields are read the way ParseUserInputMetaData reads input_fields (type
// aliases, options as strings or objects, numbers written as text), with "kind" or "type"
// naming the field kind.
func decodeRequest(args string) (agent.UserInputRequest, error) {
	var check any
	if err := json.Unmarshal([]byte(args), &check); err != nil {
		return agent.UserInputRequest{}, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		return agent.UserInputRequest{}, errors.New("the arguments must be a JSON object")
	}
	var req agent.UserInputRequest
	if err := json.Unmarshal(m["prompt"], &req.Prompt); err != nil && m["prompt"] != nil {
		return agent.UserInputRequest{}, errors.New("prompt must be a string")
	}
	if req.Prompt = strings.TrimSpace(req.Prompt); req.Prompt == "" {
		return agent.UserInputRequest{}, errors.New("prompt is required")
	}
	if raw, ok := m["request_type"]; ok && json.Unmarshal(raw, &req.RequestType) != nil {
		return agent.UserInputRequest{}, errors.New(`request_type must be "clarification", "selection" or "approval"`)
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
			return agent.UserInputRequest{}, errors.New("fields must be a list of objects")
		}
		if len(fields) > 0 {
			f, err := decodeFields(fields)
			if err != nil {
				return agent.UserInputRequest{}, err
			}
			req.Fields = f
		}
	}
	return req, nil
}

// decodeFields reads the fields through ParseUserInputMetaData, so that both formats a
// model may use to ask are read alike.
func decodeFields(raw []map[string]any) ([]agent.Field, error) {
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
	if q, ok := agent.ParseUserInputMetaData(agent.UserInputMetaDataPrefix + " " + string(b)); ok {
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
