package agui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/wire"
)

// toolKeyPrefix begins the Key of the cards of the agent's own tool calls.
const toolKeyPrefix = "agui-"

// errStalled is why a run is cut off when the agent sends nothing for IdleTimeout.
var errStalled = errors.New("stalled")

// Step runs the agent once: a new run on the conversation's thread with the history so
// far, the answers to the last run's interrupts and frontend tool calls included.
func (a *Agent) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	cp, at := lastCheckpoint(in.History)
	if at < 0 {
		cp = checkpoint{Backend: checkpointBackend, Version: 1, Thread: newThreadID(in.ConversationID)}
		if err := out.Checkpoint(cp); err != nil {
			return err
		}
	}
	state := json.RawMessage("{}")
	if len(cp.State) > 0 {
		state = cp.State
	}
	tools := []tool{}
	if a.offersTool() {
		tools = append(tools, askTool)
	}
	input := runInput{ThreadID: cp.Thread, RunID: fmt.Sprintf("parley-run-%d-%s", in.StepID, randomHex(4)),
		ProtocolVersion: "1.0", State: state, Messages: history(in.History), Tools: tools, Context: contextOf(in),
		ForwardedProps: a.props, Resume: resume(in.History, cp, at, time.Now(), in.Trigger == domain.TriggerMessage)}
	r := &run{a: a, out: out, in: in, cp: cp, cards: map[string]*domain.ToolCall{}, calls: map[string]*call{},
		started: map[string]bool{}, ended: map[string]bool{}, wrote: map[string]bool{}, resumed: input.Resume}
	if err := r.decodeState(); err != nil {
		return err
	}
	return r.do(ctx, input)
}

func (a *Agent) faultf(err error, format string, args ...any) error {
	return domain.Faultf(a.Info().Title, err, format, args...)
}

// call is a frontend tool call (request_user_input) as its events build it.
type call struct {
	args  bytes.Buffer
	ended bool
}

// run is one run of the agent: what its events have said so far.
type run struct {
	a   *Agent
	out domain.Output
	in  domain.StepInput
	cp  checkpoint

	state    any
	changed  bool // the state changed in this run
	steps    []domain.PlanStep
	lastPlan string

	text      string // the message being written, "" between messages
	chunkText bool   // it was opened by a TEXT_MESSAGE_CHUNK
	started   map[string]bool
	ended     map[string]bool // messages the agent ended
	wrote     map[string]bool // messages with text written, not ended yet
	said      []string        // the agent's ids of the messages written whole, in order
	held      []*heldText
	cards     map[string]*domain.ToolCall // the agent's own tool calls, by id
	calls     map[string]*call            // request_user_input calls, by id
	callOrder []string                    // their ids, in the order they started
	resumed   []resumeEntry               // what the run answered
	chunkCall string                      // the tool call a TOOL_CALL_CHUNK opened
	events    int
}

func (r *run) decodeState() error {
	if len(r.cp.State) == 0 {
		r.state = map[string]any{}
		return nil
	}
	v, err := decodeValue(r.cp.State)
	r.state = v
	return err
}

// do POSTs the input and handles the events until the run ends.
func (r *run) do(ctx context.Context, input runInput) error {
	a := r.a
	body, err := json.Marshal(input)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	a.header(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	// A run id is new each time: the request may be sent again on a fresh connection when a
	// kept-alive one turns out closed (the agent's keep-alive timeout ran out while a
	// question waited), which Go's client does only for a request marked idempotent.
	req.Header.Set("Idempotency-Key", input.RunID)
	// The watch starts before the request: an agent that never answers stalls too.
	idle := time.AfterFunc(a.cfg.IdleTimeout, func() { cancel(errStalled) })
	defer idle.Stop()
	resp, err := a.http.Do(req)
	if err != nil {
		if errors.Is(context.Cause(ctx), errStalled) {
			return a.faultf(err, "the agent at %s did not answer for %s", a.endpoint, a.cfg.IdleTimeout)
		}
		return r.transportFault(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r.statusFault(resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return a.faultf(nil, "the agent at %s answered with %q instead of an event stream%s", a.endpoint, mt, domain.ErrorDetail(b))
	}
	sse := wire.NewReader(resp.Body, maxEventBytes)
	sse.Activity = func() { idle.Reset(a.cfg.IdleTimeout) }
	for {
		ev, err := sse.Next()
		if err != nil {
			switch {
			case errors.Is(context.Cause(ctx), errStalled):
				return a.faultf(err, "the agent at %s sent nothing for %s: the run stalled", a.endpoint, a.cfg.IdleTimeout)
			case ctx.Err() != nil:
				return context.Cause(ctx)
			case errors.Is(err, io.EOF):
				return a.faultf(err, "the agent's event stream ended before the run finished (no RUN_FINISHED or RUN_ERROR)")
			}
			return a.faultf(err, "reading the agent's events: %v", err)
		}
		e, err := parseEvent(ev.Data)
		if err != nil {
			return a.faultf(err, "the agent sent %v", err)
		}
		done, err := r.handle(ctx, e)
		if err != nil {
			var pe *protocolError
			if errors.As(err, &pe) {
				return a.faultf(err, "the agent sent %v", err)
			}
			return err
		}
		if done {
			return nil
		}
	}
}

// transportFault explains a request that got no answer.
func (r *run) transportFault(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	why := domain.Unreachable(err)
	if why == "" {
		why = err.Error()
	}
	return r.a.faultf(err, "cannot reach the agent at %s: %s", r.a.endpoint, why)
}

// statusFault explains an answer other than 200.
func (r *run) statusFault(resp *http.Response) error {
	a := r.a
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	code := resp.StatusCode
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		hint := "the agent needs credentials: set bearer_token_env or headers in its entry"
		if a.cfg.Credential != "" {
			hint = "check the token in " + a.cfg.Credential
		}
		return a.faultf(nil, "the agent at %s refused the run with HTTP %d %s%s: %s", a.endpoint, code, http.StatusText(code), domain.ErrorDetail(b), hint)
	case code == http.StatusNotFound:
		return a.faultf(nil, "there is no agent at %s (HTTP 404): check its url", a.endpoint)
	}
	return a.faultf(nil, "the agent at %s answered HTTP %d %s%s", a.endpoint, code, http.StatusText(code), domain.ErrorDetail(b))
}
