package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeServer is an OpenAI-compatible chat-completions endpoint that answers each request
// with the next scripted response, in the real streaming format or, for a request that does
// not stream, as one chat.completion object, and records what it got.
type fakeServer struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	script   []respond
	requests []sentRequest
	headers  []http.Header
}

// respond writes one response.
type respond func(w http.ResponseWriter, r *http.Request)

// sentRequest is a request body as the model endpoint receives it.
type sentRequest struct {
	Model       string        `json:"model"`
	Stream      bool          `json:"stream"`
	Temperature *float64      `json:"temperature"`
	Messages    []sentMessage `json:"messages"`
	// ResponseFormat is {"type": "json_object"}, say; ToolChoice "none", say.
	ResponseFormat map[string]any `json:"response_format"`
	ToolChoice     any            `json:"tool_choice"`
	Tools          []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	raw []byte
}

// sentMessage is one message of a request.
type sentMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []sentCall `json:"tool_calls,omitempty"`
}

type sentCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func newFakeServer(t *testing.T, script ...respond) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// url is the base URL to configure the agent with.
func (f *fakeServer) url() string { return f.srv.URL + "/v1" }

// then queues more responses.
func (f *fakeServer) then(script ...respond) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, script...)
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"no such route","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req sentRequest
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("request body is not JSON: %v\n%s", err, body)
	}
	req.raw = body
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.headers = append(f.headers, r.Header.Clone())
	var next respond
	if len(f.script) > 0 {
		next, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	if next == nil {
		f.t.Errorf("unexpected request %d", len(f.requests))
		http.Error(w, `{"error":{"message":"no scripted response"}}`, http.StatusInternalServerError)
		return
	}
	next(w, r.WithContext(context.WithValue(r.Context(), streamKey{}, req.Stream)))
}

// streamKey marks in a request's context whether the client asked for a stream.
type streamKey struct{}

// streaming reports whether the request asked for a stream.
func streaming(r *http.Request) bool {
	s, _ := r.Context().Value(streamKey{}).(bool)
	return s
}

// completion writes a whole chat.completion, for a request that does not stream.
func completion(w http.ResponseWriter, message map[string]any, finish string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
	})
}

// sent returns the requests received so far.
func (f *fakeServer) sent() []sentRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sentRequest(nil), f.requests...)
}

// last returns the newest request, failing when there is none.
func (f *fakeServer) last() sentRequest {
	f.t.Helper()
	reqs := f.sent()
	if len(reqs) == 0 {
		f.t.Fatal("no request was sent")
	}
	return reqs[len(reqs)-1]
}

// sse writes event-stream chunks, flushing each as a real server does.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return sse{w: w}
}

// data writes one "data:" line.
func (s sse) data(payload string) {
	fmt.Fprintf(s.w, "data: %s\n\n", payload)
	s.w.(http.Flusher).Flush()
}

// chunk writes a chat.completion.chunk with one choice.
func (s sse) chunk(delta map[string]any, finish string) {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	s.data(chunkJSON([]any{choice}, nil))
}

// done writes the usage chunk and [DONE].
func (s sse) done() {
	s.data(chunkJSON([]any{}, map[string]any{"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}))
	s.data("[DONE]")
}

func chunkJSON(choices []any, usage any) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "fake-model", "choices": choices, "usage": usage,
	})
	return string(b)
}

// text streams a reply made of the given pieces.
func text(pieces ...string) respond {
	return textFinish("stop", pieces...)
}

// textFinish streams pieces and ends with the given finish reason.
func textFinish(finish string, pieces ...string) respond {
	return func(w http.ResponseWriter, r *http.Request) {
		if !streaming(r) {
			completion(w, map[string]any{"role": "assistant", "content": strings.Join(pieces, "")}, finish)
			return
		}
		s := startSSE(w)
		s.chunk(map[string]any{"role": "assistant", "content": ""}, "")
		for _, p := range pieces {
			s.chunk(map[string]any{"content": p}, "")
		}
		s.chunk(map[string]any{}, finish)
		s.done()
	}
}

// call is a tool call the fake model makes, its arguments sent in the given pieces.
type call struct {
	id, name string
	args     []string
}

// askCall is a request_user_input call.
func askCall(id string, args ...string) call {
	return call{id: id, name: "request_user_input", args: args}
}

// readCall is a read_document call.
func readCall(id string, args ...string) call {
	return call{id: id, name: "read_document", args: args}
}

// toolCalls streams an optional text then the calls, their pieces interleaved by index the
// way parallel calls arrive, and finishes with tool_calls.
func toolCalls(content string, calls ...call) respond {
	return func(w http.ResponseWriter, r *http.Request) {
		if !streaming(r) {
			var tcs []any
			for _, c := range calls {
				tcs = append(tcs, map[string]any{"id": c.id, "type": "function",
					"function": map[string]any{"name": c.name, "arguments": strings.Join(c.args, "")}})
			}
			completion(w, map[string]any{"role": "assistant", "content": content, "tool_calls": tcs}, "tool_calls")
			return
		}
		s := startSSE(w)
		s.chunk(map[string]any{"role": "assistant", "content": nil}, "")
		if content != "" {
			s.chunk(map[string]any{"content": content}, "")
		}
		for i, c := range calls {
			s.chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": ""},
			}}}, "")
		}
		for piece := 0; ; piece++ {
			more := false
			for i, c := range calls {
				if piece < len(c.args) {
					more = true
					s.chunk(map[string]any{"tool_calls": []any{map[string]any{
						"index": i, "function": map[string]any{"arguments": c.args[piece]},
					}}}, "")
				}
			}
			if !more {
				break
			}
		}
		s.chunk(map[string]any{}, "tool_calls")
		s.done()
	}
}

// status answers with an HTTP error and a body.
func status(code int, contentType, body string) respond {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}
