package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
)

// waitingApproval is what a card waits for while its call waits to be approved: by the
// person, or by the agent's approvers.
const waitingApproval = "approval"

// approvalQuestion asks the person to approve a call before it runs: Submit approves and
// runs it with the arguments as the form holds them (changed or not, checked against the
// tool's schema), Decline rejects it with a reason the model is told. A schema of simple
// fields is a form of them; any other is its JSON, to edit as JSON.
func approvalQuestion(asker string, tool toolserver.Tool, tc domain.ToolCall) domain.Question {
	var msg strings.Builder
	fmt.Fprintf(&msg, "Run the tool **%s** of the tool server **%s**?", mdEscape(tool.Tool), mdEscape(tool.Server))
	if d := strings.TrimSpace(tool.Description); d != "" {
		fmt.Fprintf(&msg, "\n\n> %s", strings.ReplaceAll(mdEscape(d), "\n", "\n> "))
	}
	msg.WriteString("\n\nThe arguments are what the model proposes: change them before you approve, if needed.")
	q := domain.Question{Key: tc.Key + "/approve", Asker: asker, Message: msg.String(), Type: domain.RequestApproval, Gate: true,
		SubmitLabel: "Approve and run", DeclineLabel: "Reject", Fields: []domain.Field{}}
	schema, _ := json.Marshal(tool.Schema)
	q.Fields = domain.ApprovalFields(schema, tc.Arguments)
	return q
}

// mdEscape keeps a name from being read as Markdown.
func mdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "<", "&lt;").Replace(s)
}

// continueTools goes on with the tool calls of the newest tool-call turn that are not
// over: on a resume or a Retry each runs on with the person's answers, in call order; after
// a new message from the person they end, told that the person moved on, so that no card
// stays running. It returns the events it added, and whether a call waits again.
func (a *Agent) continueTools(ctx context.Context, in domain.StepInput, out domain.Output, tt toolTurn) ([]domain.Event, bool, error) {
	h := in.History
	last, moved := -1, false
	for i := len(h) - 1; i >= 0 && last < 0; i-- {
		switch h[i].Kind {
		case domain.EventUserMessage:
			moved = true
		case domain.EventCheckpoint:
			if _, ok := readCheckpoint(h[i].Checkpoint); ok {
				last = i
			}
		}
	}
	if last < 0 {
		return nil, false, nil
	}
	cp, _ := readCheckpoint(h[last].Checkpoint)
	calls, resolutions, questions := toolEvents(h[last+1:])
	rec := &recorder{Output: out}
	waiting := false
	for i, c := range cp.Calls {
		tc, ok := calls[c.ID]
		if ok && tc.Status.Ended() {
			continue
		}
		if !ok {
			if _, done := cp.Results[c.ID]; done || a.cfg.Tools == nil {
				continue
			}
			server, tool, isTool := a.cfg.Tools.ServerOf(c.Name)
			if !isTool {
				continue
			}
			// A call of a tool server the step was cut off before: it never ran.
			tc = domain.ToolCall{Key: fmt.Sprintf("%d-c-%d", in.StepID, i), ID: c.ID, Server: server, Tool: tool,
				Arguments: rawArgs(c.Arguments), Status: domain.ToolFailed, Started: time.Now().UTC(),
				Error: "Not run: the step was cut off before this call started."}
			tc.Result = tc.Error
			if err := rec.Tool(tc); err != nil {
				return rec.events, false, err
			}
			continue
		}
		tc.Update = true
		var err error
		switch {
		case moved:
			tc.Status, tc.Waiting = domain.ToolFailed, ""
			tc.Error = "Not finished: the person sent a new message first."
			tc.Result = "Error: the call did not finish: it waited for the person, and the person moved on."
			tc.Took = time.Since(tc.Started).Round(time.Millisecond)
			err = rec.Tool(tc)
		case tc.Status == domain.ToolRunning:
			// Cut off by a stop or a restart in the middle: whether it took effect is unknown.
			tc.Status, tc.Error = domain.ToolFailed, "The call was cut off (Parley stopped or the run was stopped) before it ended; it may have taken effect in part."
			tc.Result = "Error: " + tc.Error
			tc.Took = time.Since(tc.Started).Round(time.Millisecond)
			err = rec.Tool(tc)
		case tc.Waiting == waitingApproval || tc.Waiting == "the person’s approval": // cards stored before it was waitingApproval
			q, res := questions[tc.Key+"/approve"], resolutions[tc.Key+"/approve"]
			switch {
			case q == nil:
				// The step stopped between the card and its question: ask now.
				tool, found := tt.byName(tc.Server, tc.Tool)
				if !found {
					tc.Status, tc.Waiting, tc.Error = domain.ToolFailed, "", tt.unknown(tc.Server, tc.Tool)
					tc.Result = "Error: " + tc.Error
					err = rec.Tool(tc)
					break
				}
				_, err = out.Ask(approvalQuestion(a.info.Title, tool, tc))
			case res == nil:
				// Still pending.
			default:
				tc, err = a.approved(ctx, rec, tc, q, res)
			}
		case tc.State == nil && in.Trigger == domain.TriggerRetry:
			// It waited on a live connection (a server asking mid-call) or for a session, and
			// the run was cut off there: Retry runs it again, and the server asks again.
			tc.Status, tc.Waiting, tc.Started = domain.ToolRunning, "", time.Now().UTC()
			tc.Notes = append(tc.Notes, "Run again on Retry.")
			tc, err = a.runTool(ctx, rec, tc, toolserver.Call{})
		case tc.State == nil:
			// It waited on a live connection (a server asking mid-call), which is gone.
			tc.Status, tc.Waiting, tc.Error = domain.ToolFailed, "", "The call failed: "+strings.ToLower(domain.SessionEnded[:1])+domain.SessionEnded[1:]
			tc.Result = "Error: " + tc.Error + " It may have taken effect in part."
			tc.Took = time.Since(tc.Started).Round(time.Millisecond)
			err = rec.Tool(tc)
		default:
			tc, err = a.answered(ctx, rec, tc, questions, resolutions)
		}
		if err != nil {
			return rec.events, false, err
		}
		waiting = waiting || !tc.Status.Ended()
	}
	return rec.events, waiting, nil
}

// approved runs a call the person approved, or ends it rejected. An approval set aside by a
// failure of the run is asked again (the run failed, and Retry asks anew).
func (a *Agent) approved(ctx context.Context, out domain.Output, tc domain.ToolCall, q *domain.Question, res *domain.Resolution) (domain.ToolCall, error) {
	if res.Outcome == domain.Superseded {
		again := *q
		again.ID = 0
		_, err := out.Ask(again)
		return tc, err
	}
	if res.Outcome != domain.Answered {
		tc.Status, tc.Waiting = domain.ToolRejected, ""
		tc.Error = "The person rejected the call."
		if res.Outcome != domain.Declined {
			tc.Error = fmt.Sprintf("The call did not run: its approval was %s.", res.Outcome)
		}
		tc.Result = "Not run: " + strings.ToLower(tc.Error[:1]) + tc.Error[1:]
		if res.Reason != "" {
			tc.Error += " Reason: " + res.Reason
			tc.Result += " Their reason: " + res.Reason
		}
		tc.Took = time.Since(tc.Started).Round(time.Millisecond)
		return tc, out.Tool(tc)
	}
	args, err := domain.ApprovedArguments(q, res, tc.Arguments)
	if err != nil {
		tc.Status, tc.Waiting, tc.Error = domain.ToolFailed, "", err.Error()
		tc.Result = "Error: " + err.Error()
		return tc, out.Tool(tc)
	}
	if !domain.SameJSON(args, tc.Arguments) {
		tc.Notes = append(tc.Notes, "The person changed the arguments before approving.")
	}
	tc.Arguments = args
	return a.runTool(ctx, out, tc, toolserver.Call{})
}

// answered sends the person's answers to the server's requests, and goes on with the call.
func (a *Agent) answered(ctx context.Context, out domain.Output, tc domain.ToolCall, questions map[string]*domain.Question, resolutions map[string]*domain.Resolution) (domain.ToolCall, error) {
	var ws waitState
	if err := json.Unmarshal(tc.State, &ws); err != nil {
		tc.Status, tc.Error = domain.ToolFailed, "The call's state could not be read."
		tc.Result = "Error: " + tc.Error
		return tc, out.Tool(tc)
	}
	// Questions set aside by a failure of the run are asked again (Retry asks anew).
	var again []domain.Question
	for _, input := range ws.Inputs {
		if res := resolutions[inputKey(tc, input.ID)]; res != nil && res.Outcome == domain.Superseded && input.Refusal == "" {
			q := *questions[inputKey(tc, input.ID)]
			q.ID = 0
			again = append(again, q)
		}
	}
	if len(again) > 0 {
		for _, q := range again {
			if _, err := out.Ask(q); err != nil {
				return tc, err
			}
		}
		return tc, nil
	}
	responses := map[string]toolserver.Response{}
	for id, r := range ws.Responses {
		responses[id] = r
	}
	for _, input := range ws.Inputs {
		if _, done := responses[input.ID]; done {
			continue
		}
		res := resolutions[inputKey(tc, input.ID)]
		if res == nil {
			// Never asked (the step stopped first): the request is cancelled.
			res = &domain.Resolution{Outcome: domain.Cancelled}
		}
		r, err := toolserver.Respond(input, *res)
		if err != nil {
			// Parley could not send the answer; the person refused nothing.
			tc.Notes = append(tc.Notes, err.Error())
			r = toolserver.Response{Action: "cancel"}
		}
		responses[input.ID] = r
	}
	if ws.Retry {
		// The person has been to the URLs, or not: the call goes again as it was, unless
		// they declined or cancelled.
		for _, r := range responses {
			if r.Action != "accept" {
				tc.Status, tc.Waiting = domain.ToolFailed, ""
				tc.Error = "The tool needs the person to finish something at a web address first, and they did not."
				tc.Result = "Error: " + tc.Error
				tc.Took = time.Since(tc.Started).Round(time.Millisecond)
				return tc, out.Tool(tc)
			}
		}
		return a.runTool(ctx, out, tc, toolserver.Call{})
	}
	return a.runTool(ctx, out, tc, toolserver.Call{Responses: responses, State: ws.RequestState})
}

// toolEvents indexes the events after a checkpoint: each tool call as it stands now (by the
// model's call id), and the questions and resolutions by question key.
func toolEvents(h []domain.Event) (map[string]domain.ToolCall, map[string]*domain.Resolution, map[string]*domain.Question) {
	calls := map[string]domain.ToolCall{}
	byID := map[int64]*domain.Question{}
	questions := map[string]*domain.Question{}
	resolutions := map[string]*domain.Resolution{}
	for _, ev := range h {
		switch {
		case ev.Kind == domain.EventToolCall && ev.ToolCall != nil:
			calls[ev.ToolCall.ID] = *ev.ToolCall
		case ev.Kind == domain.EventQuestionAsked && ev.Question != nil && ev.Question.Key != "":
			byID[ev.Question.ID] = ev.Question
			questions[ev.Question.Key] = ev.Question
		case ev.Kind == domain.EventQuestionResolved && ev.Resolution != nil:
			if q := byID[ev.Resolution.QuestionID]; q != nil {
				resolutions[q.Key] = ev.Resolution
			}
		}
	}
	return calls, resolutions, questions
}

// toolCallResult is what the model is told of a tool call, as the log has it.
func toolCallResult(tc domain.ToolCall) string {
	switch {
	case tc.Status.Ended():
		return tc.Result
	case tc.Status == domain.ToolWaiting:
		return "Error: the call did not finish: it waited for " + tc.Waiting + ", and the person moved on."
	}
	return "Error: the call was cut off before it ended; it may have taken effect in part."
}

// recorder is an Output that keeps the tool calls it records, for the step's history.
type recorder struct {
	domain.Output
	events []domain.Event
}

func (r *recorder) Tool(tc domain.ToolCall) error {
	if err := r.Output.Tool(tc); err != nil {
		return err
	}
	r.events = append(r.events, domain.Event{Kind: domain.EventToolCall, ToolCall: &tc})
	return nil
}
