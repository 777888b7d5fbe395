package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
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
			"fields": map[string]any{"type": "array", "items": domain.FieldSchema,
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

// handle runs a tool call: it finds the question the call's request_id asked before, or
// checks the call's audience and asks the question build makes of it; it waits for the
// outcome as the call asks, and done tells it.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest, known []string,
	build func(*call) (domain.Question, *mcp.CallToolResult), done func(*call, domain.QuestionRecord) *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	c, bad := s.readCall(req, known...)
	if bad != nil {
		return bad, nil
	}
	rec, found, err := s.opts.Runner.AskedBefore(ctx, domain.InboundRequest{UserID: c.who.user.ID, RequestID: c.requestID, Digest: c.digest()})
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
	if domain.ErrorCode(err) == domain.EINVALID {
		return badArgs("%s", domain.ErrorMessage(err))
	}
	s.opts.Logger.Error("mcp: ask", "person", c.who.user.Name, "error", err)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Parley could not store the question: " + domain.ErrorMessage(err) + " Try again."}}}
}

// ask stores a new question.
func (s *Server) ask(ctx context.Context, req *mcp.CallToolRequest, c *call, q domain.Question) (domain.QuestionRecord, *mcp.CallToolResult) {
	q.Asker, q.Key, q.To, q.Escalate = client(req, c.who), c.requestID, c.group.Name, c.escalate
	if timeout, ok, bad := c.duration("timeout"); bad != nil {
		return domain.QuestionRecord{}, bad
	} else if ok {
		if timeout < time.Second {
			return domain.QuestionRecord{}, badArgs("timeout must be at least 1s.")
		}
		q.Deadline = time.Now().Add(timeout).Truncate(time.Second)
	}
	rec, created, err := s.opts.Runner.AskInbound(ctx, domain.InboundRequest{UserID: c.who.user.ID, Client: q.Asker,
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
func (s *Server) await(ctx context.Context, req *mcp.CallToolRequest, c *call, rec domain.QuestionRecord) domain.QuestionRecord {
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
func outcome(rec domain.QuestionRecord) string {
	switch {
	case rec.Pending():
		return "pending"
	case rec.Resolution.Outcome == domain.Superseded:
		return string(domain.Cancelled)
	}
	return string(rec.Resolution.Outcome)
}

// result is a tool's result: the same JSON as structured content and as text.
func result(v map[string]any, rec domain.QuestionRecord, who *caller) *mcp.CallToolResult {
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
