package agui

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// finish ends the run as RUN_FINISHED says: done, stopped, or waiting for the person's
// answers to its interrupts or its request_user_input calls. The checkpoint (the state, the
// interrupts now open) is stored before the questions are asked, so that a resume always
// finds what it must answer.
func (r *run) finish(ev event) error {
	if err := r.endAllText(); err != nil {
		return err
	}
	o := ev.Outcome
	if o == nil {
		// A producer from before outcomes: its request_user_input calls are all pending.
		o = &outcome{Type: "success"}
		for _, id := range r.callOrder {
			if r.calls[id].ended {
				o.Pending = append(o.Pending, id)
			}
		}
	}
	if err := r.settleCards(o); err != nil {
		return err
	}
	next := r.cp
	next.Open, next.Said = nil, r.said
	if r.changed {
		b, err := json.Marshal(r.state)
		if err != nil {
			return err
		}
		next.State = b
	}
	var questions []domain.Question
	switch o.Type {
	case "interrupt":
		if r.a.interruptsRefused() {
			return invalid(ev.Type, "an interrupt outcome, from an agent whose capabilities say it does not interrupt")
		}
		for _, in := range o.Interrupts {
			q, refusal, err := r.interruptQuestion(in)
			if err != nil {
				return err
			}
			next.Open = append(next.Open, openInterrupt{ID: in.ID, Refusal: refusal, Expires: in.ExpiresAt, ToolCall: in.ToolCallID})
			if refusal == "" {
				questions = append(questions, q)
			}
		}
	case "success":
		for _, id := range o.Pending {
			q, err := r.callQuestion(id)
			if err != nil {
				return err
			}
			questions = append(questions, q)
		}
	}
	if r.changed || len(r.cp.Open) > 0 || len(next.Open) > 0 || len(next.Said) > 0 {
		if err := r.out.Checkpoint(next); err != nil {
			return err
		}
	}
	for _, q := range questions {
		if _, err := r.out.Ask(q); err != nil {
			return err
		}
	}
	switch {
	case o.Type == "cancelled":
		return domain.ErrStopped
	case o.Type == "interrupt" && len(questions) == 0:
		return r.a.faultf(nil, "the agent asked for what Parley cannot ask: %s Send a message to go on; the agent is told why.",
			next.Open[0].Refusal)
	}
	return nil
}

// interruptQuestion maps an interrupt onto the question model: its message, its reason and
// metadata, the tool call it holds (whose card then waits), its response schema as the form
// (mapped as MCP's requested schemas are, an object such as editedArgs as JSON to edit,
// prefilled with the call's arguments) and its expiresAt as the deadline. refusal says why Parley
// will not ask it; the next run cancels it with that reason.
func (r *run) interruptQuestion(in interrupt) (domain.Question, string, error) {
	q := domain.Question{Key: interruptKey(in.ID), Asker: r.a.Info().Title, Message: strings.TrimSpace(in.Message),
		NewMessageNote: newMessageNote}
	ctx := map[string]any{"reason": in.Reason}
	switch in.Reason {
	case "tool_call", "confirmation":
		q.Type = domain.RequestApproval
	case "input_required":
		q.Type = domain.RequestClarification
	}
	var args any
	if in.ToolCallID != "" {
		ctx["tool call"] = in.ToolCallID
		tc := r.cards[in.ToolCallID]
		if tc == nil {
			tc = r.earlierCall(in.ToolCallID)
		}
		if tc != nil {
			ctx["tool call"] = tc.Tool
			if json.Unmarshal(tc.Arguments, &args) == nil && args != nil {
				ctx["arguments"] = args
			}
			tc.Status, tc.Waiting = domain.ToolWaiting, "your answer"
			up := *tc
			up.Update = true
			if err := r.out.Tool(up); err != nil {
				return q, "", err
			}
		}
	}
	if len(in.Metadata) > 0 {
		var md map[string]any
		if json.Unmarshal(in.Metadata, &md) == nil && len(md) > 0 {
			ctx["metadata"] = md
		}
	}
	q.Context = ctx
	if q.Message == "" {
		q.Message = defaultMessage(in.Reason)
	}
	if t, ok := parseTime(in.ExpiresAt); ok {
		if !t.After(time.Now()) {
			return q, "It expired before Parley could ask it.", nil
		}
		q.Deadline = t
	}
	q, refusal := domain.SchemaQuestion(q, in.ResponseSchema, domain.SchemaOptions{AllowEmail: r.a.cfg.AllowEmail, Objects: true})
	// Approve with edits: the arguments to edit start as the call's own.
	for i, f := range q.Fields {
		if f.Name == "editedArgs" && f.Format == domain.FormatJSON && f.Default == nil && args != nil {
			b, _ := json.MarshalIndent(args, "", "  ")
			q.Fields[i].Default = string(b)
			if f.Label == "" {
				q.Fields[i].Label = "Edited arguments (JSON)"
			}
		}
	}
	return q, refusal, nil
}

// settleCards ends the cards no result will come for, as the run finishes: a call an
// interrupt held that the run answered without a result (declined: not run), and a call of
// this run left without one, unless an interrupt of this outcome holds it.
func (r *run) settleCards(o *outcome) error {
	held := map[string]bool{}
	for _, in := range o.Interrupts {
		held[in.ToolCallID] = true
	}
	cancelled := map[string]string{}
	for _, open := range r.cp.Open {
		if open.ToolCall == "" {
			continue
		}
		for _, e := range r.resumed {
			if e.InterruptID == open.ID && e.Status == "cancelled" {
				reason, _ := e.Payload.(map[string]string)
				cancelled[open.ToolCall] = reason["reason"]
			}
		}
		if _, ok := r.cards[open.ToolCall]; !ok && !held[open.ToolCall] {
			if tc := r.earlierCall(open.ToolCall); tc != nil && !tc.Status.Ended() {
				r.cards[open.ToolCall] = tc
			}
		}
	}
	for id, tc := range r.cards {
		if tc.Status.Ended() || held[id] {
			continue
		}
		if reason, ok := cancelled[id]; ok {
			tc.Status, tc.Result = domain.ToolRejected, "Not run: the person declined."
			if reason != "" {
				tc.Result = "Not run: " + reason
			}
		} else {
			tc.Status, tc.Result = domain.ToolDone, "(The agent reported no result.)"
		}
		tc.Waiting = ""
		up := *tc
		up.Update = true
		if err := r.out.Tool(up); err != nil {
			return err
		}
	}
	return nil
}

// newMessageNote says under an AG-UI question's form what a new message does.
const newMessageNote = "Sending a message instead cancels this question (and any other the agent asked with it): the agent is told, then reads your message."

func defaultMessage(reason string) string {
	switch reason {
	case "tool_call":
		return "The agent asks for your approval of a tool call."
	case "confirmation":
		return "The agent asks you to confirm."
	}
	return "The agent needs your input to go on."
}

// callQuestion is the question a request_user_input call of this run asks.
func (r *run) callQuestion(id string) (domain.Question, error) {
	c := r.calls[id]
	if c == nil {
		if tc, ok := r.cards[id]; ok {
			return domain.Question{}, invalid("RUN_FINISHED", "pendingToolCallIds names %q, a call of the agent's own tool %s, not of a tool Parley offered", id, tc.Tool)
		}
		return domain.Question{}, invalid("RUN_FINISHED", "pendingToolCallIds names %q, which no TOOL_CALL_START of this run opened", id)
	}
	req, err := domain.DecodeUserInputRequest(c.args.String())
	if err != nil {
		return domain.Question{}, r.a.faultf(err, "the agent called %s with arguments Parley cannot use: %v", domain.AskToolName, err)
	}
	q := req.Question()
	q.Key, q.Asker, q.NewMessageNote = id, r.a.Info().Title, newMessageNote
	if err := domain.RefuseSecrets(q).Check(); err != nil {
		return domain.Question{}, r.a.faultf(err, "the agent's %s call cannot be shown: %v", domain.AskToolName, err)
	}
	return q, nil
}
