package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/parley-chat/parley/toolserver"
)

// captured is a request as the endpoint got it.
type captured struct {
	method, uri string
	header      http.Header
	body        []byte
}

// captureServer records every request and answers a stream with [DONE] and anything else
// with a one-choice chat.completion.
type captureServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newCaptureServer(t *testing.T) *captureServer {
	t.Helper()
	s := &captureServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, captured{method: r.Method, uri: r.URL.RequestURI(), header: r.Header.Clone(), body: b})
		s.mu.Unlock()
		if strings.Contains(string(b), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"{}"}}]}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// take returns the one request received since the last take.
func (s *captureServer) take(t *testing.T) captured {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(s.reqs))
	}
	r := s.reqs[0]
	s.reqs = nil
	return r
}

// viaOpenAIGo sends a request as Parley sent it with openai-go: the same service options,
// the same per-request options.
func viaOpenAIGo(t *testing.T, base, apiKey string, p oai.ChatCompletionNewParams, stream bool) {
	t.Helper()
	opts := []option.RequestOption{option.WithBaseURL(base), option.WithHTTPClient(&http.Client{}), option.WithMaxRetries(0)}
	if apiKey != "" {
		opts = append(opts, option.WithAPIKey(apiKey))
	}
	chat := oai.NewChatCompletionService(opts...)
	idem := option.WithHeader("Idempotency-Key", idempotencyKey())
	if !stream {
		if _, err := chat.New(context.Background(), p, idem); err != nil {
			t.Fatalf("openai-go: %v", err)
		}
		return
	}
	var res *http.Response
	if _, err := chat.New(context.Background(), p, idem, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&res)); err != nil {
		t.Fatalf("openai-go: %v", err)
	}
	res.Body.Close()
}

// sameJSON fails unless a and b decode to the same value.
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("new body is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("openai-go body is not JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("bodies differ\n got: %s\nwant: %s", got, want)
	}
}

// sameRequest compares what the endpoint got from the new client and from openai-go: method,
// path and query, body (as JSON values), and the headers that matter. Accept differs on
// purpose for a stream: openai-go's New always sent application/json.
func sameRequest(t *testing.T, got, want captured, stream bool) {
	t.Helper()
	if got.method != want.method || got.uri != want.uri {
		t.Errorf("request line: got %s %s, want %s %s", got.method, got.uri, want.method, want.uri)
	}
	sameJSON(t, got.body, want.body)
	for _, h := range []string{"Content-Type", "Authorization"} {
		if g, w := got.header.Values(h), want.header.Values(h); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: got %q, want %q", h, g, w)
		}
	}
	for _, r := range []captured{got, want} {
		if k := r.header.Get("Idempotency-Key"); !strings.HasPrefix(k, "parley-") || len(k) != len("parley-")+24 {
			t.Errorf("Idempotency-Key: %q", k)
		}
	}
	wantAccept := "application/json"
	if stream {
		wantAccept = "text/event-stream"
	}
	if g := got.header.Get("Accept"); g != wantAccept {
		t.Errorf("Accept: got %q, want %q", g, wantAccept)
	}
}

// TestRequest_SameAsOpenAIGo sends every shape of request Parley builds with the new client
// and, built as before, with openai-go, and compares what the endpoint got.
func TestRequest_SameAsOpenAIGo(t *testing.T) {
	temp := func(f float64) *float64 { return &f }
	history := []message{
		{Role: roleSystem, Content: "You help. <b>&</b> \"quoted\" \u2028 ünïcode"},
		{Role: roleUser, Content: "Plan a party"},
		{Role: roleAssistant, Content: "Sure."},
		{Role: roleAssistant, Content: ""},
		{Role: roleUser, Content: ""},
		{Role: roleAssistant, Calls: []toolCall{{ID: "call_1", Name: "request_user_input", Arguments: `{"prompt":"Which city?"}`}}},
		{Role: roleTool, Content: `{"outcome":"answered","values":{"answer":"Lisbon"}}`, CallID: "call_1"},
		{Role: roleAssistant, Content: "Let me look.", Calls: []toolCall{
			{ID: "call_2", Name: "read_document", Arguments: `{"id": 3}`},
			{ID: "call_3", Name: "files__search", Arguments: ``},
		}},
		{Role: roleTool, Content: "", CallID: "call_2"},
		{Role: roleTool, Content: "no match", CallID: "call_3"},
		{Role: roleAssistant, Calls: []toolCall{{ID: "", Name: "", Arguments: "{}"}}},
		{Role: roleTool, Content: "x", CallID: ""},
		{Role: roleUser, Content: "Thanks\n\nAVAILABLE_DOCUMENTS:\n- 3: plan.md"},
	}
	mcpTools := toolTurn{tools: []toolserver.Tool{
		{Name: "files__search", Server: "files", Tool: "search", Title: "Search", Description: "Finds files.",
			Schema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "required": []any{"q"}}},
		{Name: "files__list", Server: "files", Tool: "list", Title: "List files", Description: "List files in a folder.", Schema: map[string]any{}},
		{Name: "clock__now", Server: "clock", Tool: "now"},
	}}
	tests := []struct {
		name string
		cfg  func(*Config)
		msgs []message
		t    turn
	}{
		{name: "system and user", msgs: history[:2]},
		{name: "whole history", msgs: history},
		{name: "no messages", msgs: nil},
		{name: "temperature", cfg: func(c *Config) { c.Temperature = temp(0.7) }, msgs: history[:2]},
		{name: "temperature zero", cfg: func(c *Config) { c.Temperature = temp(0) }, msgs: history[:2]},
		{name: "ask tool", cfg: func(c *Config) { c.AllowQuestions = true }, msgs: history},
		{name: "ask tool, final", cfg: func(c *Config) { c.AllowQuestions = true }, msgs: history, t: turn{final: true}},
		{name: "read tool", msgs: history, t: turn{read: true}},
		{name: "read tool, final", msgs: history, t: turn{read: true, final: true}},
		{name: "final without tools", msgs: history[:2], t: turn{final: true}},
		{name: "tool servers", msgs: history, t: turn{tools: mcpTools}},
		{name: "every tool, final, temperature", cfg: func(c *Config) { c.AllowQuestions, c.Temperature = true, temp(1.25) },
			msgs: history, t: turn{read: true, final: true, tools: mcpTools}},
		{name: "no API key", cfg: func(c *Config) { c.APIKey = "" }, msgs: history[:2]},
	}
	srv := newCaptureServer(t)
	for _, base := range []string{"/v1", "/v1/", "", "/", "/openai/v1?api-version=2024-10-21"} {
		for _, tt := range tests {
			t.Run(base+" "+tt.name, func(t *testing.T) {
				cfg := Config{Name: "helper", BaseURL: srv.URL + base, APIKey: "sk-test", Model: "fake-model"}
				if tt.cfg != nil {
					tt.cfg(&cfg)
				}
				a, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				body := a.request(tt.msgs, tt.t)
				body.Stream = true
				res, err := a.chat.post(context.Background(), body, &watch{first: time.Minute, idle: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				got := srv.take(t)
				viaOpenAIGo(t, cfg.BaseURL, cfg.APIKey, a.refParams(tt.msgs, tt.t), true)
				sameRequest(t, got, srv.take(t), true)
			})
		}
	}
}

// TestAnalyzerRequest_SameAsOpenAIGo does the same for the analyzer's request, which does
// not stream and asks for a JSON object.
func TestAnalyzerRequest_SameAsOpenAIGo(t *testing.T) {
	srv := newCaptureServer(t)
	for _, tt := range []struct {
		name string
		cfg  func(*Config)
	}{
		{"plain", nil},
		{"temperature", func(c *Config) { v := 0.2; c.Temperature = &v }},
		{"no API key", func(c *Config) { c.APIKey = "" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "fake-model"}
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			az, err := NewAnalyzer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := az.Split(context.Background(), "Split <this> & that"); err == nil {
				t.Fatal("the capture server's reply has no intent, want an error")
			}
			got := srv.take(t)
			viaOpenAIGo(t, cfg.BaseURL, cfg.APIKey, az.a.refAnalyzerParams("Split <this> & that"), false)
			sameRequest(t, got, srv.take(t), false)
		})
	}
}

// TestCompletionReply_SameAsOpenAIGo reads chat.completion bodies, usual and odd, as the
// analyzer reads them now and as openai-go read them, and compares what the analyzer uses:
// whether it failed, how many choices, and the first one's text, refusal and finish reason.
func TestCompletionReply_SameAsOpenAIGo(t *testing.T) {
	bodies := []string{
		`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":"{\"intent\":\"x\"}","refusal":null,"annotations":[]}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"choices":[{"finish_reason":"length","message":{"content":"{\"intent\": \"cut"}}]}`,
		`{"choices":[{"finish_reason":"stop","message":{"content":null,"refusal":"I can't help with that."}}]}`,
		`{"choices":[{"finish_reason":null,"message":{"role":"assistant"}}]}`,
		`{"choices":[{"message":{"content":"first"}},{"message":{"content":"second"}}]}`,
		`{"choices":[]}`,
		`{"choices":null}`,
		`{}`,
		`{"choices":[{"message":{"content":42,"refusal":true}}]}`,
		`{"choices":[{"message":{"content":{"intent":"x"}}}]}`,
		`{"choices":[{"message":{"content":["a","b"]}}]}`,
		`{"choices":[{"finish_reason":"stop","message":{"content":"\u00e9\ud83d\ude00 <b>"}}]}`,
		`{"choices":[{"message":{"content":"ok"}}]} trailing`,
		`{"choices":[{"message":{"content":"ok"}}]`,
		`{"choices":{"message":{"content":"ok"}}}`,
		`{"choices":"none"}`,
		`{"choices":[{"message":"ok","finish_reason":"stop"}]}`,
		`{"choices":[{"message":["ok"]}]}`,
		`{"choices":[{"message":{"content":"ok"},"finish_reason":["stop"]}]}`,
		`{"choices":["x",{"message":{"content":"ok"}}]}`,
		`{"choices":[null]}`,
		`{"choices":[{"message":null}]}`,
		`[]`,
		`"text"`,
		`null`,
		``,
	}
	for _, body := range bodies {
		t.Run(body, func(t *testing.T) {
			type read struct {
				Failed                   bool
				Choices                  int
				Content, Refusal, Finish string
			}
			var want read
			var ref oai.ChatCompletion
			if err := json.NewDecoder(strings.NewReader(body)).Decode(&ref); err != nil {
				want.Failed = true
			} else if want.Choices = len(ref.Choices); want.Choices > 0 {
				want.Content, want.Refusal, want.Finish = ref.Choices[0].Message.Content, ref.Choices[0].Message.Refusal, ref.Choices[0].FinishReason
			}
			var got read
			var r completionReply
			if err := json.NewDecoder(strings.NewReader(body)).Decode(&r); err != nil {
				got.Failed = true
			} else if got.Choices = len(r.Choices.v); got.Choices > 0 {
				c := r.Choices.v[0]
				got.Content, got.Refusal, got.Finish = string(c.Message.v.Content), string(c.Message.v.Refusal), string(c.FinishReason)
			}
			if got != want {
				t.Errorf("got %+v, openai-go read %+v", got, want)
			}
		})
	}
}

// TestPost_RedirectToOtherOrigin checks that, as with openai-go, a redirect away from the
// base URL's origin is not followed: the API key and the conversation stay where they were
// configured to go.
func TestPost_RedirectToOtherOrigin(t *testing.T) {
	other := newCaptureServer(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	a, err := New(Config{Name: "helper", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.chat.post(context.Background(), a.request(nil, turn{}), &watch{first: time.Minute, idle: time.Minute})
	if !errors.Is(err, errOtherOrigin) {
		t.Errorf("got %v, want errOtherOrigin", err)
	}
	if n := len(other.reqs); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
}
