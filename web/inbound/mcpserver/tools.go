package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/agent"
)

// The tools' arguments shared by both.
var (
	toArg = map[string]any{"type": "string",
		"description": "Whom to ask: a person's user name, or a group's name. Default: the person whose access token you use. You may ask yourself and the groups you belong to."}
	timeoutArg = map[string]any{"type": "string",
		"description": `How long the question stays open, as a Go duration ("30m", "24h"); then it expires and the outcome is "expired". Default: until someone acts.`}
	waitArg = map[string]any{"type": "string",
		"description": `How long this call waits for the outcome, as a Go duration ("30s", "10m"); then it returns outcome "pending" and the question stays asked. Default (and most): 1h. "0s" returns at once.`}
	escalateAfterArg = map[string]any{"type": "string",
		"description": `With escalate_to: if nobody acted after this long (a Go duration, "30m"), the question is also put to escalate_to, and their channels are told.`}
	escalateToArg = map[string]any{"type": "string",
		"description": "With escalate_after: the group (one you may ask) or the person (a member of such a group) who also gets the question if it still waits."}
	requestIDArg = map[string]any{"type": "string",
		"description": "Your own id for this question, unique among your questions (a UUID, or a name such as deploy-1432). Calling again with the same request_id and the same arguments returns the same question, never a second one, with its outcome once the person acted: the way to wait past a dropped connection, a client timeout or a restart. Give one whenever you may need to wait longer than one call."}
)

const askDescription = `Ask a person something and get their answer back, through a form they fill in Parley (in the browser or on their phone). Use it when you cannot go on without a person's decision or knowledge: a choice between options, a value only they know, a confirmation. Do not ask for passwords or secrets (Parley refuses them).

A good question says in "message" what you need and why, in a sentence or two, and asks for exactly the fields you need, with labels and descriptions a person understands, options for choices, and defaults where you have a good guess. Give the form either as "fields" (Parley's field model) or as "requestedSchema" (MCP elicitation's flat JSON Schema), not both.

The call waits for the answer up to "wait" (sending progress notifications when you give a progress token). If it returns outcome "pending", call ask_person again with the same request_id and arguments to keep waiting; the person can take minutes or hours. Outcomes: "answered" (values holds the typed answers), "declined" (reason may say why), "cancelled", "expired" (timeout passed), "pending".`

const approvalDescription = `Ask a person to approve an action before you take it: a deploy, a payment, a deletion, a message sent on their behalf. The person sees the action, your Markdown details and the arguments you propose, may change the arguments, and approves or rejects with a reason.

Take the action only when the result says approved: true, and then with the arguments in the result (the person may have changed them). On approved: false do not take it; reason says why when the person gave one. If it returns outcome "pending", call request_approval again with the same request_id and arguments to keep waiting.`

// addTools adds ask_person and request_approval.
func (s *Server) addTools() {
	outcomes := []string{"answered", "declined", "cancelled", "expired", "pending"}
	common := map[string]any{
		"question_id":  map[string]any{"type": "integer", "description": "The question's id in Parley."},
		"by":           map[string]any{"type": "string", "description": "Who acted: the person's user name (parley when it expired)."},
		"on_behalf_of": map[string]any{"type": "string", "description": "The person a staff member answered for, when one did."},
		"at":           map[string]any{"type": "string", "format": "date-time", "description": "When they acted."},
		"reason":       map[string]any{"type": "string", "description": "Why it was declined, rejected or expired, when said."},
		"url":          map[string]any{"type": "string", "description": "The question's card in Parley, for the person."},
	}
	with := func(props map[string]any) map[string]any {
		for k, v := range common {
			props[k] = v
		}
		return props
	}
	s.mcp.AddTool(&mcp.Tool{
		Name: "ask_person", Title: "Ask a person", Description: askDescription,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"message": map[string]any{"type": "string", "description": "The question, as the person will read it (Markdown): what you need and why."},
			"fields": map[string]any{"type": "array", "items": agent.FieldSchema,
				"description": "The form's fields, in order: kinds text, textarea, number, integer, select, multiselect, boolean, date. Give fields or requestedSchema."},
			"requestedSchema": map[string]any{"type": "object",
				"description": "The form as MCP elicitation's requestedSchema: an object of flat string (format date, date-time, uri), number, integer, boolean and enum properties, with required. Give fields or requestedSchema."},
			"to":             toArg,
			"context":        map[string]any{"description": "Supporting data the person decides by: a Markdown text, or an object or list (shown as a table)."},
			"timeout":        timeoutArg,
			"escalate_after": escalateAfterArg,
			"escalate_to":    escalateToArg,
			"wait":           waitArg,
			"request_id":     requestIDArg,
		}, "required": []string{"message"}},
		OutputSchema: map[string]any{"type": "object", "properties": with(map[string]any{
			"outcome": map[string]any{"type": "string", "enum": outcomes},
			"values":  map[string]any{"type": "object", "description": "The typed answers by field name, when answered."},
		}), "required": []string{"outcome", "question_id", "values"}},
		Annotations: &mcp.ToolAnnotations{Title: "Ask a person", OpenWorldHint: new(true), DestructiveHint: new(false)},
	}, s.askPerson)
	s.mcp.AddTool(&mcp.Tool{
		Name: "request_approval", Title: "Request a person's approval", Description: approvalDescription,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"action":         map[string]any{"type": "string", "description": `The action, in one line: "Deploy build 1432 to production".`},
			"details":        map[string]any{"type": "string", "description": "Markdown: why, what it changes, what could go wrong, how to undo it."},
			"arguments":      map[string]any{"type": "object", "description": "The parameters you propose to act with; the person may change them, and the result has them as approved."},
			"to":             toArg,
			"approvals":      map[string]any{"type": "integer", "minimum": 1, "description": "How many different people of the group in to must approve (default 1); any rejection rejects."},
			"timeout":        timeoutArg,
			"escalate_after": escalateAfterArg,
			"escalate_to":    escalateToArg,
			"wait":           waitArg,
			"request_id":     requestIDArg,
		}, "required": []string{"action"}},
		OutputSchema: map[string]any{"type": "object", "properties": with(map[string]any{
			"outcome":   map[string]any{"type": "string", "enum": []string{"approved", "rejected", "cancelled", "expired", "pending"}},
			"approved":  map[string]any{"type": "boolean", "description": "Whether to take the action."},
			"arguments": map[string]any{"type": "object", "description": "The arguments as approved (the person may have changed them)."},
		}), "required": []string{"outcome", "approved", "question_id"}},
		Annotations: &mcp.ToolAnnotations{Title: "Request approval", OpenWorldHint: new(true), DestructiveHint: new(false)},
	}, s.requestApproval)
}

// call is one tool call's arguments, read and checked.
type call struct {
	who       *caller
	tool      string
	args      map[string]json.RawMessage
	wait      time.Duration
	requestID string
	// group is the group the question is for, when "to" names one.
	group agent.Group
	// escalate is whom else the question goes to if it still waits, when asked.
	escalate *agent.Escalation
}

// badArgs is a tool result that tells the model what is wrong with its arguments.
func badArgs(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

// readCall decodes a call's arguments, refusing names the tool does not take, and reads
// the arguments both tools share.
func (s *Server) readCall(req *mcp.CallToolRequest, known ...string) (*call, *mcp.CallToolResult) {
	c := &call{who: callerOf(req), tool: req.Params.Name, wait: s.opts.MaxWait}
	if c.who == nil {
		return nil, badArgs("Parley could not tell who calls: send a personal access token.")
	}
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, &c.args); err != nil {
		return nil, badArgs("The arguments must be a JSON object.")
	}
	var unknown []string
	for k := range c.args {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, badArgs("%s takes no argument %s; it takes %s.", c.tool, quoteAll(unknown), strings.Join(known, ", "))
	}
	if w, ok, bad := c.duration("wait"); bad != nil {
		return nil, bad
	} else if ok {
		c.wait = min(w, s.opts.MaxWait)
	}
	if _, bad := c.str("request_id", false); bad != nil {
		return nil, bad
	}
	c.requestID, _ = c.str("request_id", false)
	if len(c.requestID) > 200 {
		return nil, badArgs("request_id is too long: at most 200 characters.")
	}
	return c, nil
}

// checkEscalation reads escalate_after and escalate_to, given together: a group the caller
// may ask, or a member of one.
func (s *Server) checkEscalation(ctx context.Context, c *call) *mcp.CallToolResult {
	after, hasAfter, bad := c.duration("escalate_after")
	if bad != nil {
		return bad
	}
	to, bad := c.str("escalate_to", false)
	if bad != nil {
		return bad
	}
	switch {
	case !hasAfter && to == "":
		return nil
	case !hasAfter || to == "":
		return badArgs("escalate_after and escalate_to go together: give both, or neither.")
	case after < time.Second:
		return badArgs("escalate_after must be at least 1s.")
	}
	groups, err := s.opts.GroupsOf(ctx, c.who.user.ID)
	if err != nil {
		return badArgs("Parley could not read your groups: %s Try again.", agent.ErrorMessage(err))
	}
	for _, g := range groups {
		if !g.MayAsk(c.who.user.ID) {
			continue
		}
		if strings.EqualFold(g.Name, to) {
			c.escalate = &agent.Escalation{After: after, To: g.Name, GroupID: g.ID}
			return nil
		}
		for _, m := range g.Members {
			if m.Role == agent.RoleMember && strings.EqualFold(m.Name, to) && m.UserID != c.who.user.ID {
				c.escalate = &agent.Escalation{After: after, To: m.Name, UserID: m.UserID}
			}
		}
	}
	if c.escalate == nil {
		return badArgs("escalate_to: you may not escalate to %q: name a group you may ask, or a member of one.", to)
	}
	return nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// str reads a string argument.
func (c *call) str(name string, required bool) (string, *mcp.CallToolResult) {
	raw, ok := c.args[name]
	if !ok || string(raw) == "null" {
		if required {
			return "", badArgs("%s is required.", name)
		}
		return "", nil
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", badArgs("%s must be a string.", name)
	}
	v = strings.TrimSpace(v)
	if required && v == "" {
		return "", badArgs("%s is required.", name)
	}
	return v, nil
}

// duration reads a Go duration ("10m"); ok is false when it is not given.
func (c *call) duration(name string) (d time.Duration, ok bool, bad *mcp.CallToolResult) {
	v, bad := c.str(name, false)
	if bad != nil || v == "" {
		return 0, false, bad
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false, badArgs(`%s must be a Go duration such as "30s", "10m" or "24h", not %q.`, name, v)
	}
	return d, true, nil
}

// checkTo reads "to": the caller (by default), or a group they may ask (a member of it, or
// let by staff). Anyone or anything else is refused.
func (s *Server) checkTo(ctx context.Context, c *call) *mcp.CallToolResult {
	to, bad := c.str("to", false)
	if bad != nil || to == "" || strings.EqualFold(to, c.who.user.Name) {
		return bad
	}
	refused := badArgs("to: you may not ask %q: a token's person may ask themselves (leave to out) and the groups they belong to, or that staff let them ask.", to)
	g, err := s.opts.Group(ctx, to)
	if agent.ErrorCode(err) == agent.ENOTFOUND {
		return refused
	}
	if err != nil {
		return badArgs("Parley could not read the group %q: %s Try again.", to, agent.ErrorMessage(err))
	}
	if !g.MayAsk(c.who.user.ID) {
		return refused
	}
	c.group = g
	return nil
}

// digest stands for what a call asks (its arguments but wait and request_id), so that a
// request_id given again with other arguments is told apart.
func (c *call) digest() string {
	h := sha256.New()
	h.Write([]byte(c.tool))
	keys := make([]string, 0, len(c.args))
	for k := range c.args {
		if k != "wait" && k != "request_id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		var v any
		d := json.NewDecoder(bytes.NewReader(c.args[k]))
		d.UseNumber()
		_ = d.Decode(&v)
		b, _ := json.Marshal(v) // a canonical form: object keys sorted, no spaces
		fmt.Fprintf(h, "\n%s=%s", k, b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// client names the program that calls: its clientInfo (title, else name) where the
// revision gives it, else the token's name.
func client(req *mcp.CallToolRequest, who *caller) string {
	if info := req.ClientInfo(); info != nil {
		if name := strings.TrimSpace(info.Title); name != "" {
			return agent.Title(name)
		}
		if name := strings.TrimSpace(info.Name); name != "" {
			return agent.Title(name)
		}
	}
	return agent.Title(who.token)
}

// handle runs a tool call: it finds the question the call's request_id asked before, or
// checks the call's audience and asks the question build makes of it; it waits for the
// outcome as the call asks, and done tells it.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest, known []string,
	build func(*call) (agent.Question, *mcp.CallToolResult), done func(*call, agent.QuestionRecord) *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	c, bad := s.readCall(req, known...)
	if bad != nil {
		return bad, nil
	}
	rec, found, err := s.opts.Runner.AskedBefore(ctx, agent.InboundRequest{UserID: c.who.user.ID, RequestID: c.requestID, Digest: c.digest()})
	if err != nil {
		return s.failed(c, err), nil
	}
	if !found {
		if bad := s.checkTo(ctx, c); bad != nil {
			return bad, nil
		}
		if bad := s.checkEscalation(ctx, c); bad != nil {
			return bad, nil
		}
		q, bad := build(c)
		if bad != nil {
			return bad, nil
		}
		if rec, bad = s.ask(ctx, req, c, q); bad != nil {
			return bad, nil
		}
	}
	return done(c, s.await(ctx, req, c, rec)), nil
}

// failed is the tool result of an error: the caller's (EINVALID), else Parley's.
func (s *Server) failed(c *call, err error) *mcp.CallToolResult {
	if agent.ErrorCode(err) == agent.EINVALID {
		return badArgs("%s", agent.ErrorMessage(err))
	}
	s.opts.Logger.Error("mcp: ask", "person", c.who.user.Name, "error", err)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Parley could not store the question: " + agent.ErrorMessage(err) + " Try again."}}}
}

// ask stores a new question.
func (s *Server) ask(ctx context.Context, req *mcp.CallToolRequest, c *call, q agent.Question) (agent.QuestionRecord, *mcp.CallToolResult) {
	q.Asker, q.Key, q.To, q.Escalate = client(req, c.who), c.requestID, c.group.Name, c.escalate
	if timeout, ok, bad := c.duration("timeout"); bad != nil {
		return agent.QuestionRecord{}, bad
	} else if ok {
		if timeout < time.Second {
			return agent.QuestionRecord{}, badArgs("timeout must be at least 1s.")
		}
		q.Deadline = time.Now().Add(timeout).Truncate(time.Second)
	}
	rec, created, err := s.opts.Runner.AskInbound(ctx, agent.InboundRequest{UserID: c.who.user.ID, Client: q.Asker,
		RequestID: c.requestID, Digest: c.digest(), Via: "token " + c.who.token, ToGroup: c.group.ID, Question: q})
	if err != nil {
		return rec, s.failed(c, err)
	}
	if created && s.opts.Notify != nil {
		s.opts.Notify()
	}
	return rec, nil
}

// await waits for the question's outcome as the call asks (wait), and returns the question
// as it stands then: still pending when the wait ended first.
func (s *Server) await(ctx context.Context, req *mcp.CallToolRequest, c *call, rec agent.QuestionRecord) agent.QuestionRecord {
	if !rec.Pending() || c.wait == 0 || !s.startWaiting(c.who.user.ID) {
		return rec // pending: calling again with the request_id waits on
	}
	defer s.stopWaiting(c.who.user.ID)
	wctx, cancel := context.WithTimeout(ctx, c.wait)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	token := req.Params.GetProgressToken()
	var tick func()
	if token != nil {
		whom := c.who.user.Shown()
		if rec.To != "" {
			whom = "the group " + rec.To
		}
		n := 0
		tick = func() {
			n++
			_ = req.Session.NotifyProgress(wctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n),
				Message: fmt.Sprintf("Waiting for %s to answer question %d in Parley.", whom, rec.ID)})
		}
	}
	got, err := s.opts.Runner.AwaitQuestion(wctx, rec.ID, s.opts.Progress, tick)
	if err != nil {
		s.opts.Logger.Error("mcp: wait", "question", rec.ID, "error", err)
		return rec // pending, as it stood: calling again finds it
	}
	return got
}

// outcome is how a question stands, in the tools' terms.
func outcome(rec agent.QuestionRecord) string {
	switch {
	case rec.Pending():
		return "pending"
	case rec.Resolution.Outcome == agent.Superseded:
		return string(agent.Cancelled)
	}
	return string(rec.Resolution.Outcome)
}

// result is a tool's result: the same JSON as structured content and as text.
func result(v map[string]any, rec agent.QuestionRecord, who *caller) *mcp.CallToolResult {
	v["question_id"] = rec.ID
	v["url"] = who.link(rec)
	if r := rec.Resolution; r != nil {
		v["by"], v["at"] = r.By, r.At.UTC().Format(time.RFC3339)
		if r.OnBehalfOf != "" {
			v["on_behalf_of"] = r.OnBehalfOf
		}
		if r.Reason != "" {
			v["reason"] = r.Reason
		}
	}
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// askPerson is ask_person.
func (s *Server) askPerson(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.handle(ctx, req, []string{"message", "fields", "requestedSchema", "to", "context", "timeout", "escalate_after", "escalate_to", "wait", "request_id"},
		s.askQuestion, func(c *call, rec agent.QuestionRecord) *mcp.CallToolResult {
			values := map[string]any{}
			if r := rec.Resolution; r != nil && r.Outcome == agent.Answered && r.Values != nil {
				values = r.Values
			}
			return result(map[string]any{"outcome": outcome(rec), "values": values}, rec, c.who)
		})
}

// askQuestion is ask_person's question: its message, context and form.
func (s *Server) askQuestion(c *call) (agent.Question, *mcp.CallToolResult) {
	msg, bad := c.str("message", true)
	if bad != nil {
		return agent.Question{}, bad
	}
	fields, hasFields := c.args["fields"]
	schema, hasSchema := c.args["requestedSchema"]
	hasFields = hasFields && string(fields) != "null"
	hasSchema = hasSchema && string(schema) != "null"
	if hasFields == hasSchema {
		return agent.Question{}, badArgs("Give the form as exactly one of fields (Parley's field model) or requestedSchema (MCP's flat JSON Schema); this call gave %s.",
			map[bool]string{true: "both", false: "neither"}[hasFields])
	}
	doc := map[string]json.RawMessage{"prompt": mustJSON(msg), "request_type": mustJSON("clarification")}
	if ctxArg, ok := c.args["context"]; ok {
		doc["context"] = ctxArg
	}
	var q agent.Question
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
			if kind == "" || !agent.KnownKind(kind) || agent.FieldKind(kind) == agent.KindFile {
				return q, badArgs("fields: field %d (%v) has kind %q, which Parley does not ask; use text, textarea, number, integer, select, multiselect, boolean or date.", i+1, f["name"], kind)
			}
		}
		doc["fields"] = fields
		r, err := agent.DecodeUserInputRequest(string(mustJSON(doc)))
		if err != nil {
			return q, badArgs("fields: %v.", err)
		}
		q = agent.RefuseSecrets(r.Question())
	} else {
		r, err := agent.DecodeUserInputRequest(string(mustJSON(doc)))
		if err != nil {
			return q, badArgs("%v.", err)
		}
		base := r.Question()
		var refusal string
		if q, refusal = agent.SchemaQuestion(base, schema, agent.SchemaOptions{AllowEmail: s.opts.AllowEmail}); refusal != "" {
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
func approvalQuestion(c *call) (agent.Question, *mcp.CallToolResult) {
	var q agent.Question
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
		members := len(c.group.People(agent.RoleMember))
		if c.group.IsMember(c.who.user.ID) {
			members-- // who asks does not approve their own request
		}
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
	q = agent.Question{Message: "**Approve:** " + action, Type: agent.RequestApproval, SubmitLabel: "Approve", DeclineLabel: "Reject", Fields: []agent.Field{}}
	if approvals > 1 {
		q.Approvals = approvals
	}
	if details != "" {
		q.Message += "\n\n" + details
	}
	if args != nil {
		q.Message += "\n\nThe arguments are what the agent proposes: change them before you approve, if needed."
		q.Fields = agent.ApprovalFields(agent.ArgumentsSchema(args), args)
	}
	return q, nil
}

// approvalResult tells request_approval's outcome: approved (with the arguments as
// approved), rejected, or how else the question stands.
func approvalResult(c *call, rec agent.QuestionRecord) *mcp.CallToolResult {
	v := map[string]any{"approved": false}
	switch o := outcome(rec); o {
	case "answered":
		v["outcome"], v["approved"] = "approved", true
		v["arguments"] = json.RawMessage("{}")
		if args, _ := c.proposed(); args != nil {
			approved, err := agent.ApprovedArguments(&rec.Question, rec.Resolution, args)
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

// maxWaiting bounds the calls of one person that wait at once: a client that gives up on
// its calls and asks again (2025-11-25 does not tell the server) leaves them waiting, each
// up to its wait. Past it, calls return "pending" at once.
const maxWaiting = 32

func (s *Server) startWaiting(userID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == nil {
		s.waiting = map[int64]int{}
	}
	if s.waiting[userID] >= maxWaiting {
		return false
	}
	s.waiting[userID]++
	return true
}

func (s *Server) stopWaiting(userID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting[userID]--; s.waiting[userID] <= 0 {
		delete(s.waiting, userID)
	}
}
