package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
)

// askPerson is ask_person.
func (s *Server) askPerson(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.handle(ctx, req, []string{"message", "fields", "requestedSchema", "to", "context", "timeout", "escalate_after", "escalate_to", "wait", "request_id"},
		s.askQuestion, func(c *call, rec domain.QuestionRecord) *mcp.CallToolResult {
			values := map[string]any{}
			if r := rec.Resolution; r != nil && r.Outcome == domain.Answered && r.Values != nil {
				values = r.Values
			}
			return result(map[string]any{"outcome": outcome(rec), "values": values}, rec, c.who)
		})
}

// askQuestion is ask_person's question: its message, context and form.
func (s *Server) askQuestion(c *call) (domain.Question, *mcp.CallToolResult) {
	msg, bad := c.str("message", true)
	if bad != nil {
		return domain.Question{}, bad
	}
	fields, hasFields := c.args["fields"]
	schema, hasSchema := c.args["requestedSchema"]
	hasFields = hasFields && string(fields) != "null"
	hasSchema = hasSchema && string(schema) != "null"
	if hasFields == hasSchema {
		return domain.Question{}, badArgs("Give the form as exactly one of fields (Parley's field model) or requestedSchema (MCP's flat JSON Schema); this call gave %s.",
			map[bool]string{true: "both", false: "neither"}[hasFields])
	}
	doc := map[string]json.RawMessage{"prompt": mustJSON(msg), "request_type": mustJSON("clarification")}
	if ctxArg, ok := c.args["context"]; ok {
		doc["context"] = ctxArg
	}
	var q domain.Question
	if hasFields {
		var list []map[string]any
		if json.Unmarshal(fields, &list) != nil || len(list) == 0 {
			return q, badArgs("fields must be a list of one or more field objects, each with a name and a kind.")
		}
		for i, f := range list {
			kind, _ := f["kind"].(string)
			if kind == "" {
				kind, _ = f["type"].(string)
			}
			if kind == "" || !domain.KnownKind(kind) || domain.FieldKind(kind) == domain.KindFile {
				return q, badArgs("fields: field %d (%v) has kind %q, which Parley does not ask; use text, textarea, number, integer, select, multiselect, boolean or date.", i+1, f["name"], kind)
			}
		}
		doc["fields"] = fields
		r, err := domain.DecodeUserInputRequest(string(mustJSON(doc)))
		if err != nil {
			return q, badArgs("fields: %v.", err)
		}
		q = domain.RefuseSecrets(r.Question())
	} else {
		r, err := domain.DecodeUserInputRequest(string(mustJSON(doc)))
		if err != nil {
			return q, badArgs("%v.", err)
		}
		base := r.Question()
		var refusal string
		if q, refusal = domain.SchemaQuestion(base, schema, domain.SchemaOptions{AllowEmail: s.opts.AllowEmail}); refusal != "" {
			return q, badArgs("requestedSchema: %s", refusal)
		}
	}
	if len(q.Fields) == 0 && len(q.Refused) > 0 {
		return q, badArgs("Parley will not ask this: %s", q.DeclineReason())
	}
	if err := q.Check(); err != nil {
		return q, badArgs("The form cannot be shown: %v.", err)
	}
	return q, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// requestApproval is request_approval.
func (s *Server) requestApproval(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.handle(ctx, req, []string{"action", "details", "arguments", "to", "approvals", "timeout", "escalate_after", "escalate_to", "wait", "request_id"},
		approvalQuestion, approvalResult)
}

// proposed are the arguments a request_approval call proposes, nil when none.
func (c *call) proposed() (json.RawMessage, *mcp.CallToolResult) {
	args := c.args["arguments"]
	if len(args) == 0 || string(args) == "null" {
		return nil, nil
	}
	if args[0] != '{' {
		return nil, badArgs("arguments must be a JSON object.")
	}
	return args, nil
}

// approvalQuestion is request_approval's question: the action, its details, and the
// arguments as a form to approve (changed or not) or reject.
func approvalQuestion(c *call) (domain.Question, *mcp.CallToolResult) {
	var q domain.Question
	action, bad := c.str("action", true)
	if bad != nil {
		return q, bad
	}
	details, bad := c.str("details", false)
	if bad != nil {
		return q, bad
	}
	approvals := 1
	if raw, ok := c.args["approvals"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &approvals) != nil || approvals < 1 {
			return q, badArgs("approvals must be a whole number, 1 or more.")
		}
		members := c.group.MembersBesides(c.who.user.ID) // who asks does not approve their own request
		switch {
		case approvals > 1 && c.group.ID == 0:
			return q, badArgs("approvals: %d different people must approve, so to must name a group of at least %d members.", approvals, approvals)
		case approvals > members && c.group.ID != 0:
			return q, badArgs("approvals: the group %s has %d members besides you, fewer than the %d approvals asked.", c.group.Name, members, approvals)
		}
	}
	args, bad := c.proposed()
	if bad != nil {
		return q, bad
	}
	q = domain.Question{Message: "**Approve:** " + action, Type: domain.RequestApproval, SubmitLabel: "Approve", DeclineLabel: "Reject", Fields: []domain.Field{}}
	if approvals > 1 {
		q.Approvals = approvals
	}
	if details != "" {
		q.Message += "\n\n" + details
	}
	if args != nil {
		q.Message += "\n\nThe arguments are what the agent proposes: change them before you approve, if needed."
		q.Fields = domain.ApprovalFields(domain.ArgumentsSchema(args), args)
	}
	return q, nil
}

// approvalResult tells request_approval's outcome: approved (with the arguments as
// approved), rejected, or how else the question stands.
func approvalResult(c *call, rec domain.QuestionRecord) *mcp.CallToolResult {
	v := map[string]any{"approved": false}
	switch o := outcome(rec); o {
	case "answered":
		v["outcome"], v["approved"] = "approved", true
		v["arguments"] = json.RawMessage("{}")
		if args, _ := c.proposed(); args != nil {
			approved, err := domain.ApprovedArguments(&rec.Question, rec.Resolution, args)
			if err != nil {
				return badArgs("%v", err)
			}
			v["arguments"] = approved
		}
	case "declined":
		v["outcome"] = "rejected"
	default:
		v["outcome"] = o
	}
	return result(v, rec, c.who)
}
