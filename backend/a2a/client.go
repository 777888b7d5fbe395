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
	"math"
	"net/http"

	sdk "github.com/a2aproject/a2a-go/a2a"
	"github.com/parley-chat/parley/internal/wire"
)

// client makes the four JSON-RPC calls of A2A v0.3 Parley needs: message/stream (or
// message/send, to an agent whose card says it does not stream), tasks/resubscribe,
// tasks/get and tasks/cancel. It is written here rather than taken from the SDK's client,
// whose package carries a gRPC transport (and with it gRPC, protobuf and x/net/trace) that
// Parley never dials. The wire under its HTTP client records what each call saw; the
// errors returned here are only what the caller wraps.
type client struct {
	url    string
	http   *http.Client
	stream bool // the card says the agent streams
}

// newClient returns the client of the JSON-RPC interface a card names: its preferred one,
// or the first of its additional interfaces that is JSON-RPC.
func newClient(card *sdk.AgentCard, hc *http.Client) (*client, error) {
	ifaces := append([]sdk.AgentInterface{{Transport: card.PreferredTransport, URL: card.URL}}, card.AdditionalInterfaces...)
	var offered []string
	for _, i := range ifaces {
		if i.Transport == sdk.TransportProtocolJSONRPC {
			return &client{url: i.URL, http: hc, stream: card.Capabilities.Streaming}, nil
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

// post sends one request; accept is the content type asked for.
func (c *client) post(ctx context.Context, method string, params any, accept string) (*http.Response, error) {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", Method: method, Params: params, ID: rand.Text()})
	if err != nil {
		return nil, fmt.Errorf("failed to marshal request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("failed to create HTTP request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("failed to send HTTP request: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("unexpected HTTP status: %s", resp.Status)
	}
	return resp, nil
}

// call makes a call answered by one response and returns its result.
func (c *client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	resp, err := c.post(ctx, method, params, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r rpcResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("failed to decode response: %w", err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
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
func (c *client) events(ctx context.Context, method string, params any) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		resp, err := c.post(ctx, method, params, "text/event-stream")
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		// The wire has bounded each event already.
		r := wire.NewReader(resp.Body, math.MaxInt32)
		for {
			e, err := r.Next()
			if err == nil {
				var rr rpcResponse
				if err := json.Unmarshal(e.Data, &rr); err != nil {
					yield(nil, fmt.Errorf("failed to parse SSE data: %w", err))
					return
				}
				if rr.Error != nil {
					yield(nil, rr.Error)
					return
				}
				ev, err := sdk.UnmarshalEventJSON(rr.Result)
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(ev, nil) {
					return
				}
				continue
			}
			if !errors.Is(err, io.EOF) {
				yield(nil, fmt.Errorf("SSE stream error: %w", err))
			}
			return
		}
	}
}
