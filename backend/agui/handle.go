package agui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// handle acts on one event; done is true once the run has finished.
func (r *run) handle(ctx context.Context, ev event) (done bool, err error) {
	r.events++
	if r.events == 1 && ev.Type != "RUN_STARTED" && ev.Type != "RUN_ERROR" {
		return false, invalid(ev.Type, "a run's first event must be RUN_STARTED")
	}
	// A chunked message or call ends at the next event of another kind, as @ag-ui/client's
	// transformChunks has it; raw, activity and encrypted-reasoning events pass through.
	passThrough := ev.Type == "RAW" || ev.Type == "ACTIVITY_SNAPSHOT" || ev.Type == "ACTIVITY_DELTA" || ev.Type == "REASONING_ENCRYPTED_VALUE"
	if ev.Type != "TEXT_MESSAGE_CHUNK" && r.chunkText && !passThrough {
		if err := r.endText(); err != nil {
			return false, err
		}
	}
	if ev.Type == "TOOL_CALL_CHUNK" && ev.ToolCallID != "" && r.chunkCall != "" && ev.ToolCallID != r.chunkCall {
		if err := r.endCall(r.chunkCall); err != nil {
			return false, err
		}
		r.chunkCall = ""
	}
	if ev.Type != "TOOL_CALL_CHUNK" && r.chunkCall != "" && !passThrough {
		if err := r.endCall(r.chunkCall); err != nil {
			return false, err
		}
		r.chunkCall = ""
	}
	switch ev.Type {
	case "RUN_STARTED":
		if r.events > 1 {
			return false, invalid(ev.Type, "the run had started already")
		}
	case "TEXT_MESSAGE_START":
		if r.started[ev.MessageID] {
			return false, invalid(ev.describe(), "the message was started before")
		}
		r.started[ev.MessageID] = true
		if r.text != "" && !r.chunkText {
			r.held = append(r.held, &heldText{id: ev.MessageID})
			return false, nil
		}
		return false, r.switchText(ev.MessageID, false)
	case "TEXT_MESSAGE_CONTENT":
		if !r.started[ev.MessageID] {
			return false, invalid(ev.describe(), "no TEXT_MESSAGE_START opened the message")
		}
		if r.ended[ev.MessageID] {
			return false, invalid(ev.describe(), "the message had ended")
		}
		if h := r.heldText(ev.MessageID); h != nil {
			h.text.WriteString(ev.Delta)
			return false, nil
		}
		if r.text != "" && r.text != ev.MessageID && !r.chunkText {
			h := &heldText{id: ev.MessageID}
			h.text.WriteString(ev.Delta)
			r.held = append(r.held, h)
			return false, nil
		}
		if err := r.switchText(ev.MessageID, false); err != nil {
			return false, err
		}
		return false, r.write(ev.Delta)
	case "TEXT_MESSAGE_END":
		if !r.started[ev.MessageID] {
			return false, invalid(ev.describe(), "no TEXT_MESSAGE_START opened the message")
		}
		r.ended[ev.MessageID] = true
		if h := r.heldText(ev.MessageID); h != nil {
			h.ended = true
			return false, nil
		}
		if r.text == ev.MessageID {
			return false, r.endText()
		}
	case "TEXT_MESSAGE_CHUNK":
		id := ev.MessageID
		if id == "" {
			if !r.chunkText {
				return false, invalid(ev.Type, "messageId is required on the first chunk of a message")
			}
			id = r.text
		}
		r.started[id] = true
		if err := r.switchText(id, true); err != nil {
			return false, err
		}
		return false, r.write(ev.Delta)
	case "TOOL_CALL_START":
		return false, r.startCall(ev.ToolCallID, ev.ToolCallName)
	case "TOOL_CALL_ARGS":
		return false, r.callArgs(ev.describe(), ev.ToolCallID, ev.Delta)
	case "TOOL_CALL_END":
		return false, r.endCall(ev.ToolCallID)
	case "TOOL_CALL_CHUNK":
		id := ev.ToolCallID
		if id == "" {
			id = r.chunkCall
		}
		if id == "" {
			return false, invalid(ev.Type, "toolCallId is required on the first chunk of a call")
		}
		if _, known := r.cards[id]; !known && r.calls[id] == nil {
			if ev.ToolCallName == "" {
				return false, invalid(ev.describe(), "toolCallName is required on the first chunk of a call")
			}
			if err := r.startCall(id, ev.ToolCallName); err != nil {
				return false, err
			}
		}
		r.chunkCall = id
		return false, r.callArgs(ev.describe(), id, ev.Delta)
	case "TOOL_CALL_RESULT":
		return false, r.result(ev)
	case "STATE_SNAPSHOT":
		v, err := decodeValue(ev.Snapshot)
		if err != nil {
			return false, invalid(ev.Type, "snapshot: %v", err)
		}
		r.state, r.changed = v, true
		return false, r.publishPlan()
	case "STATE_DELTA":
		v, err := applyPatch(r.state, ev.Patch)
		if err != nil {
			return false, invalid(ev.Type, "the delta does not apply to the state: %v", err)
		}
		r.state, r.changed = v, true
		return false, r.publishPlan()
	case "STEP_STARTED":
		r.steps = append(r.steps, domain.PlanStep{Title: ev.StepName, Status: domain.StepInProgress})
		return false, r.publishPlan()
	case "STEP_FINISHED":
		for i := len(r.steps) - 1; i >= 0; i-- {
			if r.steps[i].Title == ev.StepName && r.steps[i].Status == domain.StepInProgress {
				r.steps[i].Status = domain.StepDone
				return false, r.publishPlan()
			}
		}
		return false, invalid(ev.Type, "no STEP_STARTED opened the step %q", ev.StepName)
	case "RUN_ERROR":
		_ = r.endAllText()
		r.failSteps()
		msg := domain.OneLine(ev.Message)
		if ev.Code != "" {
			msg += " (" + ev.Code + ")"
		}
		return true, r.a.faultf(nil, "%s", msg)
	case "RUN_FINISHED":
		return true, r.finish(ev)
	}
	// Reasoning, activities, snapshots of messages, raw and custom events, subagents: valid,
	// and nothing the conversation shows.
	return false, nil
}

// switchText makes id the message being written, ending another one first.
func (r *run) switchText(id string, chunk bool) error {
	if r.text != "" && r.text != id {
		r.noteSaid(r.text)
		if err := r.out.EndMessage(); err != nil {
			return err
		}
	}
	r.text, r.chunkText = id, chunk
	return nil
}

// endText ends the message being written; a message held meanwhile is written next.
func (r *run) endText() error {
	if r.text == "" {
		return nil
	}
	r.noteSaid(r.text)
	r.text, r.chunkText = "", false
	if err := r.out.EndMessage(); err != nil {
		return err
	}
	for len(r.held) > 0 && r.text == "" {
		h := r.held[0]
		r.held = r.held[1:]
		r.text = h.id
		if h.text.Len() > 0 {
			if err := r.write(h.text.String()); err != nil {
				return err
			}
		}
		if h.ended {
			r.noteSaid(h.id)
			r.text = ""
			if err := r.out.EndMessage(); err != nil {
				return err
			}
		}
	}
	return nil
}

// write appends to the message being written.
func (r *run) write(delta string) error {
	if strings.TrimSpace(delta) != "" {
		r.wrote[r.text] = true
	}
	return r.out.Text(delta)
}

// noteSaid records that the agent's message id ended with text in it (see checkpoint.Said).
func (r *run) noteSaid(id string) {
	if r.wrote[id] {
		r.said = append(r.said, id)
		delete(r.wrote, id)
	}
}

// endAllText ends the message being written and writes out every held one.
func (r *run) endAllText() error {
	for r.text != "" {
		if err := r.endText(); err != nil {
			return err
		}
	}
	return nil
}

// heldText is a message started while another was being written: the conversation shows
// one message at a time, so its text waits, in the order messages started, until the one
// being written ends.
type heldText struct {
	id    string
	text  strings.Builder
	ended bool
}

func (r *run) heldText(id string) *heldText {
	for _, h := range r.held {
		if h.id == id {
			return h
		}
	}
	return nil
}

// startCall opens a tool call: a card for the agent's own tools, a question to come for
// request_user_input.
func (r *run) startCall(id, name string) error {
	if _, ok := r.cards[id]; ok || r.calls[id] != nil {
		return invalid("TOOL_CALL_START ("+id+")", "the call was started before")
	}
	if err := r.endText(); err != nil {
		return err
	}
	if name == domain.AskToolName {
		r.calls[id] = &call{}
		r.callOrder = append(r.callOrder, id)
		return nil
	}
	tc := &domain.ToolCall{Key: toolKeyPrefix + id, ID: id, Server: r.a.Info().Title, Tool: name, Status: domain.ToolRunning, Started: time.Now()}
	r.cards[id] = tc
	return r.out.Tool(*tc)
}

func (r *run) callArgs(what, id, delta string) error {
	if c := r.calls[id]; c != nil {
		c.args.WriteString(delta)
		return nil
	}
	tc, ok := r.cards[id]
	if !ok {
		return invalid(what, "no TOOL_CALL_START opened the call")
	}
	tc.Arguments = append(tc.Arguments, delta...)
	return nil
}

func (r *run) endCall(id string) error {
	if c := r.calls[id]; c != nil {
		c.ended = true
		return nil
	}
	tc, ok := r.cards[id]
	if !ok {
		return invalid("TOOL_CALL_END ("+id+")", "no TOOL_CALL_START opened the call")
	}
	if !json.Valid(tc.Arguments) {
		b, _ := json.Marshal(string(tc.Arguments))
		tc.Arguments = b
	}
	up := *tc
	up.Update = true
	return r.out.Tool(up)
}

// result shows a tool's result on its card: a call of this run, or of an earlier one (a
// call an interrupt held until the person answered).
func (r *run) result(ev event) error {
	if r.calls[ev.ToolCallID] != nil {
		return nil // an answer to Parley's own tool is Parley's to give: the agent's is left
	}
	tc, ok := r.cards[ev.ToolCallID]
	if !ok {
		tc = r.earlierCall(ev.ToolCallID)
		if tc == nil {
			return invalid(ev.describe(), "no tool call %q was made", ev.ToolCallID)
		}
		r.cards[ev.ToolCallID] = tc
	}
	text := contentText(ev.Content)
	tc.Status, tc.Waiting, tc.Result = domain.ToolDone, "", text
	tc.Content = []domain.ToolContent{{Type: "text", Text: text}}
	if !tc.Started.IsZero() {
		tc.Took = time.Since(tc.Started)
	}
	up := *tc
	up.Update = true
	return r.out.Tool(up)
}

// earlierCall is the card of a call of the agent's from an earlier run, as it stands.
func (r *run) earlierCall(id string) *domain.ToolCall {
	for i := len(r.in.History) - 1; i >= 0; i-- {
		ev := r.in.History[i]
		if ev.Kind == domain.EventToolCall && ev.ToolCall != nil && ev.ToolCall.Key == toolKeyPrefix+id {
			tc := *ev.ToolCall
			return &tc
		}
	}
	return nil
}

// contentText is a tool result as text: the string, or the text of its parts (the others named).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString("\n")
		}
		if p.Type == "text" {
			b.WriteString(p.Text)
		} else {
			fmt.Fprintf(&b, "[%s]", p.Type)
		}
	}
	return b.String()
}

// failSteps marks the steps still running as failed, when the run fails.
func (r *run) failSteps() {
	for i := range r.steps {
		if r.steps[i].Status == domain.StepInProgress {
			r.steps[i].Status = domain.StepFailed
		}
	}
	_ = r.publishPlan()
}

// publishPlan shows the run's progress: the plan the agent's state holds, where it holds
// one, else the steps the run reported. Only a change is published.
func (r *run) publishPlan() error {
	p, ok := planFromState(r.state)
	if !ok {
		if len(r.steps) == 0 {
			return nil
		}
		p = domain.Plan{Title: "Progress", Steps: append([]domain.PlanStep(nil), r.steps...)}
	}
	b, _ := json.Marshal(p)
	if string(b) == r.lastPlan {
		return nil
	}
	r.lastPlan = string(b)
	return r.out.Plan(p)
}

// planFromState reads a plan from the agent's state: a list of steps (under "steps",
// "plan", "todos" or "tasks"), each a text or an object with a title (or description,
// name, task, content) and a status (or done).
func planFromState(state any) (domain.Plan, bool) {
	m, ok := state.(map[string]any)
	if !ok {
		return domain.Plan{}, false
	}
	for _, key := range []string{"steps", "plan", "todos", "tasks"} {
		list, ok := m[key].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		p := domain.Plan{Title: "Plan"}
		if t, ok := m["title"].(string); ok {
			p.Title = t
		}
		for _, item := range list {
			step, ok := planStep(item)
			if !ok {
				return domain.Plan{}, false
			}
			p.Steps = append(p.Steps, step)
		}
		return p, true
	}
	return domain.Plan{}, false
}

func planStep(item any) (domain.PlanStep, bool) {
	if s, ok := item.(string); ok {
		return domain.PlanStep{Title: s, Status: domain.StepPending}, true
	}
	m, ok := item.(map[string]any)
	if !ok {
		return domain.PlanStep{}, false
	}
	var step domain.PlanStep
	for _, k := range []string{"title", "description", "name", "task", "content"} {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			step.Title = s
			break
		}
	}
	if step.Title == "" {
		return domain.PlanStep{}, false
	}
	step.Status = domain.StepPending
	if done, ok := m["done"].(bool); ok && done {
		step.Status = domain.StepDone
	}
	if s, ok := m["status"].(string); ok {
		switch strings.ToLower(strings.ReplaceAll(s, "-", "_")) {
		case "done", "completed", "complete", "finished", "success":
			step.Status = domain.StepDone
		case "in_progress", "running", "executing", "active", "started":
			step.Status = domain.StepInProgress
		case "failed", "error":
			step.Status = domain.StepFailed
		case "skipped", "cancelled", "canceled":
			step.Status = domain.StepSkipped
		}
	}
	return step, true
}
