package a2a

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/internal/a2av1"
	"github.com/parley-chat/parley/internal/wire"
)

// client makes the four JSON-RPC calls of A2A v0.3 Parley needs: message/stream (or
// message/send, to an agent whose card says it does not stream), tasks/resubscribe,
// tasks/get and tasks/cancel; to an agent that speaks v1.0, each call is sent as v1.0 and
// each answer read back as v0.3 (internal/a2av1). It is written here rather than taken from
// the SDK's client, whose package carries a gRPC transport (and with it gRPC, protobuf and
// x/net/trace) that Parley never dials.
//
// It reads each answer once: a stream with wire.Reader, an event at a time, each event's
// JSON decoded into the SDK's types. On the way it records on the call's watch what it saw
// (see wire.go), cuts a stream that stalls, refuses an event above the size limit, and
// rewrites the parts the SDK's types would fail on.
type client struct {
	url    string
	http   *http.Client
	stream bool // the card says the agent streams
	v1     bool // the agent speaks A2A v1.0
	limits
}

// limits bound what a client reads.
type limits struct {
	// idle is how long a stream may send nothing.
	idle time.Duration
	// maxEvent bounds an event or an answer.
	maxEvent int
	// echo is how much longer than maxEvent an event may arrive when it is a Task whose
	// history (which Parley never reads) holds the documents Parley sent.
	echo int
}

// newClient returns the client of the JSON-RPC interface a card names: its preferred one,
// or the first of its additional interfaces that is JSON-RPC. v1 says the interface speaks
// A2A v1.0.
func newClient(card *sdk.AgentCard, hc *http.Client, v1 bool, lim limits) (*client, error) {
	ifaces := append([]sdk.AgentInterface{{Transport: card.PreferredTransport, URL: card.URL}}, card.AdditionalInterfaces...)
	var offered []string
	for _, i := range ifaces {
		if i.Transport == sdk.TransportProtocolJSONRPC {
			return &client{url: i.URL, http: hc, stream: card.Capabilities.Streaming, v1: v1, limits: lim}, nil
		}
		offered = append(offered, string(i.Transport))
	}
	return nil, fmt.Errorf("no compatible transports found: available transports - %v", offered)
}

// rpcRequest is a JSON-RPC 2.0 request.
type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
	ID      string `json:"id"`
}

// rpcResponse is a JSON-RPC 2.0 response, or one event of a stream.
type rpcResponse struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// post sends one request and records the answer's status and content type on the call's
// watch. An answer other than 200 is an error (its start recorded too). A stream is cut once
// it has sent nothing for the idle time; closing the body ends the call.
func (c *client) post(ctx context.Context, w *watch, method string, params any, stream bool) (*http.Response, error) {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", Method: method, Params: params, ID: rand.Text()})
	if err != nil {
		return nil, fmt.Errorf("failed to marshal request: %w", err)
	}
	if c.v1 {
		if body, _, err = a2av1.RequestToV1(body); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("failed to create HTTP request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.v1 {
		req.Header.Set("A2A-Version", a2av1.Version)
	}
	var timer *time.Timer
	if stream {
		req.Header.Set("Accept", "text/event-stream")
		timer = time.AfterFunc(c.idle, func() {
			w.mu.Lock()
			w.stalled = true
			w.mu.Unlock()
			cancel()
		})
	}
	stop := func() {
		if timer != nil {
			timer.Stop()
		}
		cancel()
	}
	resp, err := c.http.Do(req)
	if err != nil {
		stop()
		return nil, fmt.Errorf("failed to send HTTP request: %w", err)
	}
	w.mu.Lock()
	w.status, w.contentType = resp.StatusCode, resp.Header.Get("Content-Type")
	w.mu.Unlock()
	if resp.StatusCode != http.StatusOK {
		start, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		stop()
		w.mu.Lock()
		w.body = start
		w.mu.Unlock()
		return nil, fmt.Errorf("unexpected HTTP status: %s", resp.Status)
	}
	resp.Body = &callBody{Reader: &activity{r: resp.Body, timer: timer, idle: c.idle}, body: resp.Body, stop: stop}
	return resp, nil
}

// callBody is an answer's body: closing it ends the call.
type callBody struct {
	io.Reader
	body io.Closer
	stop func()
}

func (b *callBody) Close() error {
	b.stop()
	return b.body.Close()
}

// activity resets the idle timer, if any, whenever bytes arrive.
type activity struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (a *activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 && a.timer != nil {
		a.timer.Reset(a.idle)
	}
	return n, err
}

// readAnswer reads a whole answer that is not a stream, within the limits, as v0.3.
func (c *client) readAnswer(w *watch, method string, body io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, int64(c.maxEvent+c.echo)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > c.maxEvent+c.echo {
		return nil, w.tooLarge(len(data))
	}
	if c.v1 {
		data = a2av1.ResponseToV03(a2av1.MethodV1(method), data)
	}
	return fit(w, data, c.maxEvent, c.echo)
}

// decode reads one JSON-RPC response (or event): its result, the parts the SDK cannot read
// rewritten, or its error, which is recorded on the watch.
func decode(w *watch, data []byte) (json.RawMessage, error) {
	var r rpcResponse
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&r); err != nil {
		return nil, err
	}
	if r.Error != nil {
		w.setRPCError(r.Error)
		return nil, r.Error
	}
	result, _ := sanitize(r.Result)
	return result, nil
}

// call makes a call answered by one response and returns its result.
func (c *client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	w := watchFrom(ctx)
	resp, err := c.post(ctx, w, method, params, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := c.readAnswer(w, method, resp.Body)
	if err != nil {
		return nil, err
	}
	result, err := decode(w, data)
	var rpcErr *rpcError
	if err != nil && !errors.As(err, &rpcErr) {
		return nil, fmt.Errorf("failed to decode response: %w", err)
	}
	return result, err
}

// task makes a call whose result is a Task.
func (c *client) task(ctx context.Context, method string, params any) (*sdk.Task, error) {
	result, err := c.call(ctx, method, params)
	if err != nil {
		return nil, err
	}
	var t sdk.Task
	if err := json.Unmarshal(result, &t); err != nil {
		return nil, fmt.Errorf("failed to unmarshal task: %w", err)
	}
	return &t, nil
}

// GetTask reads a task (tasks/get).
func (c *client) GetTask(ctx context.Context, q *sdk.TaskQueryParams) (*sdk.Task, error) {
	return c.task(ctx, "tasks/get", q)
}

// CancelTask asks the agent to cancel a task (tasks/cancel).
func (c *client) CancelTask(ctx context.Context, id *sdk.TaskIDParams) (*sdk.Task, error) {
	return c.task(ctx, "tasks/cancel", id)
}

// SendStreamingMessage sends a message and yields the events of its reply (message/stream).
// An agent that does not stream is sent message/send, and its answer is the one event.
func (c *client) SendStreamingMessage(ctx context.Context, m *sdk.MessageSendParams) iter.Seq2[sdk.Event, error] {
	if c.stream {
		return c.events(ctx, "message/stream", m)
	}
	return func(yield func(sdk.Event, error) bool) {
		result, err := c.call(ctx, "message/send", m)
		if err != nil {
			yield(nil, err)
			return
		}
		ev, err := sdk.UnmarshalEventJSON(result)
		if err != nil {
			yield(nil, fmt.Errorf("result violates A2A spec - could not determine type: %w", err))
			return
		}
		switch ev.(type) {
		case *sdk.Task, *sdk.Message:
			yield(ev, nil)
		default:
			yield(nil, fmt.Errorf("result violates A2A spec - expected Task or Message, got %T", ev))
		}
	}
}

// ResubscribeToTask follows a task again from now (tasks/resubscribe).
func (c *client) ResubscribeToTask(ctx context.Context, id *sdk.TaskIDParams) iter.Seq2[sdk.Event, error] {
	return c.events(ctx, "tasks/resubscribe", id)
}

// events makes a streaming call and yields its events until the stream ends or fails.
//
// A v1.0 agent's answer that is one JSON-RPC response rather than a stream (an error before
// the first event) is read as the stream's one event; a v0.3 agent's is only recorded, and
// the call then fails for not streaming (callFault), unless it was an error.
func (c *client) events(ctx context.Context, method string, params any) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		w := watchFrom(ctx)
		resp, err := c.post(ctx, w, method, params, true)
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		// event decodes one event's data; ok is false for one that says nothing.
		event := func(data []byte) (ev sdk.Event, ok bool, err error) {
			result, err := decode(w, data)
			var rpcErr *rpcError
			switch {
			case errors.As(err, &rpcErr):
				return nil, true, err
			case err != nil:
				return nil, true, fmt.Errorf("failed to parse SSE data: %w", err)
			case c.v1 && (len(result) == 0 || string(result) == "null"):
				// The empty result a v0.3 server may end a stream with, as a2av1.Server
				// translates it: nothing happened.
				return nil, false, nil
			}
			ev, err = sdk.UnmarshalEventJSON(result)
			return ev, true, err
		}
		if !isEventStream(resp.Header.Get("Content-Type")) {
			data, err := c.readAnswer(w, method, resp.Body)
			if err != nil {
				yield(nil, err)
				return
			}
			ev, ok, err := event(data)
			var rpcErr *rpcError
			switch {
			case errors.As(err, &rpcErr), c.v1 && err != nil:
				yield(nil, err)
			case c.v1 && ok:
				yield(ev, nil)
			}
			return
		}
		r := wire.NewReader(resp.Body, c.maxEvent+c.echo)
		for {
			// A last event whose blank line never came is read like any other: its lines
			// came whole, and its JSON says whether it is.
			e, err := r.Next()
			var tl *wire.TooLargeError
			switch {
			case errors.As(err, &tl):
				yield(nil, w.tooLarge(tl.Size))
				return
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				yield(nil, fmt.Errorf("SSE stream error: %w", err))
				return
			}
			data := e.Data
			if c.v1 {
				data = a2av1.ResponseToV03(a2av1.MethodV1(method), data)
			}
			if data, err = fit(w, data, c.maxEvent, c.echo); err != nil {
				yield(nil, err)
				return
			}
			ev, ok, err := event(data)
			if err != nil {
				yield(nil, err)
				return
			}
			if ok && !yield(ev, nil) {
				return
			}
		}
	}
}
