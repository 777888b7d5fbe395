package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
)

// maxInputRounds bounds the rounds of one tool call that Parley answers by itself (requests
// it declined) before the call counts as failed.
const maxInputRounds = 10

// toolTurn is what the agent's tool servers offer in one step.
type toolTurn struct {
	tools   []toolserver.Tool
	missing []toolserver.Missing
}

func (a *Agent) toolTurn() toolTurn {
	if a.cfg.Tools == nil {
		return toolTurn{}
	}
	tools, missing := a.cfg.Tools.Tools()
	return toolTurn{tools: tools, missing: missing}
}

// find returns the tool the model called by name.
func (tt toolTurn) find(name string) (toolserver.Tool, bool) {
	for _, t := range tt.tools {
		if t.Name == name {
			return t, true
		}
	}
	return toolserver.Tool{}, false
}

// functions are the tool servers' tools as the model is offered them.
func (tt toolTurn) functions() []chatTool {
	out := make([]chatTool, 0, len(tt.tools))
	for _, t := range tt.tools {
		desc := t.Description
		if t.Title != "" && !strings.Contains(desc, t.Title) {
			desc = strings.TrimSpace(t.Title + ". " + desc)
		}
		out = append(out, function(functionDecl{
			Name: t.Name, Description: desc + " (tool server " + t.Server + ")", Parameters: t.Schema,
		}))
	}
	return out
}

// unknown says why a call of the server's tool cannot run: the server is missing, or has
// no such tool.
func (tt toolTurn) unknown(server, tool string) string {
	for _, m := range tt.missing {
		if m.Server == server {
			return fmt.Sprintf("The tool server %s is not available now: %v", server, m.Err)
		}
	}
	var names []string
	for _, t := range tt.tools {
		if t.Server == server {
			names = append(names, t.Name)
		}
	}
	return fmt.Sprintf("The tool server %s has no tool %q; its tools are %s.", server, tool, strings.Join(names, ", "))
}

// byName finds a tool by its server and its own name.
func (tt toolTurn) byName(server, tool string) (toolserver.Tool, bool) {
	for _, t := range tt.tools {
		if t.Server == server && t.Tool == tool {
			return t, true
		}
	}
	return toolserver.Tool{}, false
}

// note tells the model which servers are missing, and so which tools it does not have.
func (tt toolTurn) note() string {
	if len(tt.missing) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Missing tools\n\nThese tool servers are not available now, so their tools are not offered; " +
		"if you need them, tell the person:")
	for _, m := range tt.missing {
		fmt.Fprintf(&b, "\n- %s", m.Server)
		if len(m.Tools) > 0 {
			fmt.Fprintf(&b, " (its tools: %s)", strings.Join(m.Tools, ", "))
		}
		fmt.Fprintf(&b, ": %v", m.Err)
	}
	return b.String()
}

// isToolCall reports whether a call is for a tool server: one of its tools, or a tool of a
// server that is not available now (the call then fails and says why).
func (a *Agent) isToolCall(c toolCall, t turn) bool {
	if _, ok := t.tools.find(c.Name); ok {
		return true
	}
	if a.cfg.Tools == nil {
		return false
	}
	_, _, ok := a.cfg.Tools.ServerOf(c.Name)
	return ok
}

// toolCalls runs the model's calls of tool servers, in order: a call that needs the
// person's approval asks for it instead; a call whose server asks something waits for the
// answer. It returns the results of the calls that ended, by call id, and whether any waits.
func (a *Agent) toolCalls(ctx context.Context, in domain.StepInput, out domain.Output, t turn, calls []toolCall, round int) (map[string]string, bool, error) {
	results := map[string]string{}
	waiting := false
	for i, c := range calls {
		tc := domain.ToolCall{Key: fmt.Sprintf("%d-%d-%d", in.StepID, round, i), ID: c.ID, Started: time.Now().UTC()}
		tool, ok := t.tools.find(c.Name)
		if !ok {
			server, name, _ := a.cfg.Tools.ServerOf(c.Name)
			tc.Server, tc.Tool, tc.Arguments = server, name, rawArgs(c.Arguments)
			tc.Status, tc.Error = domain.ToolFailed, t.tools.unknown(server, name)
			tc.Result = "Error: " + tc.Error
			if err := out.Tool(tc); err != nil {
				return nil, false, err
			}
			results[c.ID] = tc.Result
			continue
		}
		tc.Server, tc.Tool = tool.Server, tool.Tool
		var args map[string]any
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || args == nil {
			tc.Arguments = rawArgs(c.Arguments)
			tc.Status, tc.Error = domain.ToolFailed, "The arguments are not a JSON object."
			tc.Result = "Error: the arguments are not a JSON object; call the tool again with valid JSON."
			if err := out.Tool(tc); err != nil {
				return nil, false, err
			}
			results[c.ID] = tc.Result
			continue
		}
		tc.Arguments = json.RawMessage(c.Arguments)
		if tool.Approve {
			tc.Status, tc.Waiting = domain.ToolWaiting, waitingApproval
			if err := out.Tool(tc); err != nil {
				return nil, false, err
			}
			if _, err := out.Ask(approvalQuestion(a.info.Title, tool, tc)); err != nil {
				return nil, false, err
			}
			waiting = true
			continue
		}
		tc, err := a.runTool(ctx, out, tc, toolserver.Call{})
		if err != nil {
			return nil, false, err
		}
		if tc.Status.Ended() {
			results[c.ID] = tc.Result
		} else {
			waiting = true
		}
	}
	return results, waiting, nil
}

// inputKey is the key of the question asked for a server's input request in the call's
// current round: ids repeat from round to round.
func inputKey(tc domain.ToolCall, id string) string {
	return fmt.Sprintf("%s/%d/%s", tc.Key, tc.Round, id)
}

func rawArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// waitState is what a call waiting for the person keeps (in its event) to go on: the
// server's requests and state, and the answers Parley gave itself.
type waitState struct {
	RequestState string                         `json:"request_state,omitempty"`
	Inputs       []toolserver.Input             `json:"inputs"`
	Responses    map[string]toolserver.Response `json:"responses,omitempty"`
	// Retry is a call sent again as it was once the person has been to the URLs.
	Retry  bool `json:"retry,omitempty"`
	Rounds int  `json:"rounds"`
}

// runTool runs a call, round after round, until it ends or waits for the person; each
// change shows on its card. c carries the answers and state of the round before, if any.
// Only a cancelled ctx (a stop, a shutdown) is an error: the call is then left running,
// and a later step reports it cut off.
func (a *Agent) runTool(ctx context.Context, out domain.Output, tc domain.ToolCall, c toolserver.Call) (domain.ToolCall, error) {
	rounds := 0
	for {
		tc.Status, tc.Waiting, tc.Progress, tc.State = domain.ToolRunning, "", nil, nil
		if err := out.Tool(tc); err != nil {
			return tc, err
		}
		tc.Update = true
		c.Server, c.Tool, c.Arguments = tc.Server, tc.Tool, tc.Arguments
		p := &callCard{out: out, tc: tc, tools: a.cfg.Tools}
		c.Progress, c.Live, c.Wait = p.report, p.ask, p.wait
		res, err := a.cfg.Tools.Call(ctx, c)
		tc = p.stop()
		if err != nil && ctx.Err() != nil {
			if tc.Status == domain.ToolWaiting {
				// Cut off while it waited: the card says so (and Retry runs it again).
				why := "Parley stopped"
				if errors.Is(context.Cause(ctx), domain.ErrStopped) {
					why = "the run was stopped"
				}
				tc.Notes = append(tc.Notes, "Cut off while it waited for "+tc.Waiting+": "+why+".")
				if err := out.Tool(tc); err != nil {
					return tc, err
				}
			}
			return tc, ctx.Err()
		}
		if err != nil {
			tc.Status, tc.Error, tc.Result = domain.ToolFailed, err.Error(), "Error: the call failed: "+err.Error()
			tc.Took = time.Since(tc.Started).Round(time.Millisecond)
			return tc, out.Tool(tc)
		}
		if !res.NeedsInput() {
			tc.Status, tc.Content, tc.Result = domain.ToolDone, res.Content, res.Text
			if res.IsError {
				tc.Status, tc.Error = domain.ToolFailed, "The tool reported an error."
				tc.Result = "The tool reported an error:\n" + res.Text
			}
			tc.Took = time.Since(tc.Started).Round(time.Millisecond)
			return tc, out.Tool(tc)
		}
		rounds++
		tc.Round++
		ws := waitState{RequestState: res.State, Inputs: res.Inputs, Retry: res.Retry, Rounds: rounds, Responses: map[string]toolserver.Response{}}
		var ask []domain.Question
		var askedInputs []toolserver.Input
		for _, in := range res.Inputs {
			if in.Refusal != "" {
				tc.Notes = append(tc.Notes, in.Refusal)
				ws.Responses[in.ID] = toolserver.Response{Action: "decline"}
				continue
			}
			q := in.Question
			q.Key = inputKey(tc, in.ID)
			ask = append(ask, q)
			askedInputs = append(askedInputs, in)
		}
		if len(ask) == 0 {
			// Every request was declined by Parley: send that back at once.
			if rounds >= maxInputRounds || res.Retry {
				tc.Status, tc.Error = domain.ToolFailed, "The tool server kept asking for input Parley cannot give."
				tc.Result = "Error: " + tc.Error + " " + strings.Join(tc.Notes, " ")
				tc.Took = time.Since(tc.Started).Round(time.Millisecond)
				return tc, out.Tool(tc)
			}
			c = toolserver.Call{Responses: ws.Responses, State: res.State}
			continue
		}
		state, err := json.Marshal(ws)
		if err != nil {
			return tc, err
		}
		tc.Status, tc.Waiting, tc.State = domain.ToolWaiting, "the person’s answer", state
		if err := out.Tool(tc); err != nil {
			return tc, err
		}
		for i, q := range ask {
			id, err := out.Ask(q)
			if err != nil {
				return tc, err
			}
			a.cfg.Tools.Awaiting(tc.Server, askedInputs[i].ElicitationID, id)
		}
		return tc, nil
	}
}

// callCard is the card of a running call: it shows the call's progress, at most every
// progressEvery (each report is stored, and a call may report many times a second), and
// the questions the server asks in the middle of it.
type callCard struct {
	mu      sync.Mutex
	out     domain.Output
	tools   *toolserver.Pool
	tc      domain.ToolCall
	last    time.Time
	stopped bool
}

const progressEvery = 250 * time.Millisecond

func (p *callCard) report(pr domain.ToolProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || time.Since(p.last) < progressEvery {
		return
	}
	p.last = time.Now()
	p.tc.Progress = &pr
	_ = p.out.Tool(p.tc)
}

// wait shows on the card that the call waits for a session of its server, or (why "")
// that it runs again.
func (p *callCard) wait(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tc.Status, p.tc.Waiting = domain.ToolWaiting, why
	if why == "" {
		p.tc.Status = domain.ToolRunning
	}
	_ = p.out.Tool(p.tc)
}

// stop ends the reports, and returns the call as the reports and live questions left it:
// its result comes next.
func (p *callCard) stop() domain.ToolCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.tc.Progress = nil
	return p.tc
}

// ask puts a request the server sends in the middle of the call (a protocol before
// 2026-07-28) to the person, and waits for the answer: the call's card waits meanwhile. A
// request Parley cannot ask is declined, and the card says why. If the step ends first,
// the question expires.
func (p *callCard) ask(ctx context.Context, in toolserver.Input) (toolserver.Response, error) {
	p.mu.Lock()
	if in.Refusal != "" {
		p.tc.Notes = append(p.tc.Notes, in.Refusal)
		err := p.out.Tool(p.tc)
		p.mu.Unlock()
		return toolserver.Response{Action: "decline"}, err
	}
	p.tc.Round++
	q := in.Question
	q.Key, q.Live = inputKey(p.tc, in.ID), true
	id, err := p.out.Ask(q)
	if err == nil {
		// The server's word that the person is done at a URL answers it, as in a round trip.
		p.tools.Awaiting(p.tc.Server, in.ElicitationID, id)
		p.tc.Status, p.tc.Waiting, p.tc.Progress = domain.ToolWaiting, "the person’s answer", nil
		err = p.out.Tool(p.tc)
	}
	p.mu.Unlock()
	if err != nil {
		return toolserver.Response{}, err
	}
	res, err := p.out.Await(ctx, id)
	if err != nil {
		return toolserver.Response{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tc.Status, p.tc.Waiting = domain.ToolRunning, ""
	if err := p.out.Tool(p.tc); err != nil {
		return toolserver.Response{}, err
	}
	r, err := toolserver.Respond(in, res)
	if err != nil {
		p.tc.Notes = append(p.tc.Notes, err.Error())
		return toolserver.Response{Action: "cancel"}, nil
	}
	return r, nil
}
