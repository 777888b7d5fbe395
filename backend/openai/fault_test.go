package openai_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

// wantFault checks that a step failed with an error naming the agent and saying each of want.
func wantFault(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("step succeeded, want a fault")
	}
	msg := err.Error()
	t.Logf("fault: %s", msg)
	if !strings.HasPrefix(msg, "Model helper: ") {
		t.Errorf("error does not name the agent: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
}

func TestStep_ConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/v1"
	l.Close()
	c := newConvo(t, newAgent(t, base))
	start := time.Now()
	_, err = c.Send("Hello?")
	wantFault(t, err, "cannot reach the model endpoint at "+base+": connection refused")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s: the client retried", d)
	}
}

func TestStep_HTTPErrors(t *testing.T) {
	tests := []struct {
		name        string
		code        int
		contentType string
		body        string
		want        []string
	}{
		{"openai 401", 401, "application/json",
			`{"error":{"message":"Incorrect API key provided: sk-abc.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			[]string{"answered 401 Unauthorized", "Incorrect API key provided: sk-abc. (invalid_request_error)", "check the agent's API key"}},
		{"openai 500", 500, "application/json",
			`{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`,
			[]string{"answered 500 Internal Server Error", "The server had an error while processing your request."}},
		{"ollama 404", 404, "application/json", `{"error":"model \"llama9\" not found, try pulling it first"}`,
			[]string{"answered 404 Not Found", `model "llama9" not found, try pulling it first`, "check the base URL and the model name"}},
		{"rate limit", 429, "application/json", `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			[]string{"429 Too Many Requests", "Rate limit reached"}},
		{"proxy 502", 502, "text/html", `<html><body>Bad gateway</body></html>`,
			[]string{"answered 502 Bad Gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, status(tt.code, tt.contentType, tt.body))
			c := newConvo(t, newAgent(t, srv.url()))
			_, err := c.Send("Hello?")
			wantFault(t, err, tt.want...)
			if len(srv.sent()) != 1 {
				t.Errorf("sent %d requests, want 1 (no retries)", len(srv.sent()))
			}
		})
	}
}

func TestStep_Stall(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.chunk(map[string]any{"role": "assistant", "content": "Let me th"}, "")
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) { c.IdleTimeout = 150 * time.Millisecond }))
	start := time.Now()
	rec, err := c.Send("Think hard")
	wantFault(t, err, "sent nothing for 150ms", "stalled")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the stall was noticed after %s", d)
	}
	if got, want := rec.Messages(), []string{"Let me th"}; !slices.Equal(got, want) {
		t.Errorf("partial text: got %q, want %q", got, want)
	}
}

func TestStep_SlowButSteadyStreamIsNoStall(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		for _, p := range []string{"a", "b", "c", "d", "e"} {
			time.Sleep(60 * time.Millisecond)
			s.chunk(map[string]any{"content": p}, "")
		}
		s.chunk(map[string]any{}, "stop")
		s.done()
	})
	c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) { c.IdleTimeout = 150 * time.Millisecond }))
	rec := c.MustSend("Slowly")
	if got, want := rec.Messages(), []string{"abcde"}; !slices.Equal(got, want) {
		t.Errorf("messages: got %q, want %q", got, want)
	}
}

func TestStep_MalformedChunk(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.chunk(map[string]any{"role": "assistant", "content": "Par"}, "")
		s.data(`{"id":"chatcmpl-fake","choices":[{"index":0,"delta":{"content":"tial`)
		s.done()
	})
	c := newConvo(t, newAgent(t, srv.url()))
	rec, err := c.Send("Hi")
	wantFault(t, err, "sent a malformed chunk")
	if got, want := rec.Messages(), []string{"Par"}; !slices.Equal(got, want) {
		t.Errorf("partial text: got %q, want %q", got, want)
	}
}

func TestStep_ErrorEventInStream(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.data(`{"error":{"message":"The model is overloaded","type":"server_error"}}`)
	})
	c := newConvo(t, newAgent(t, srv.url()))
	_, err := c.Send("Hi")
	wantFault(t, err, "reported an error while streaming: The model is overloaded")
}

func TestStep_StreamClosedEarly(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.chunk(map[string]any{"role": "assistant", "content": "Half a rep"}, "")
	})
	c := newConvo(t, newAgent(t, srv.url()))
	rec, err := c.Send("Hi")
	wantFault(t, err, "closed the stream before the reply was complete")
	if got, want := rec.Messages(), []string{"Half a rep"}; !slices.Equal(got, want) {
		t.Errorf("partial text: got %q, want %q", got, want)
	}
}

func TestStep_NotAnEventStream(t *testing.T) {
	srv := newFakeServer(t, status(200, "text/html", "<html>Welcome to nginx</html>"))
	c := newConvo(t, newAgent(t, srv.url()))
	_, err := c.Send("Hi")
	wantFault(t, err, `answered with "text/html" instead of an event stream`)
}

func TestStep_LengthLimitThenRetry(t *testing.T) {
	srv := newFakeServer(t, textFinish("length", "The plan has ", "three par"))
	c := newConvo(t, newAgent(t, srv.url()))
	rec, err := c.Send("Plan it")
	wantFault(t, err, "cut off")
	if got, want := rec.Messages(), []string{"The plan has three par"}; !slices.Equal(got, want) {
		t.Errorf("partial text: got %q, want %q", got, want)
	}
	// Retry asks afresh: the cut-off reply is not sent back as the model's own.
	srv.then(text("The plan has three parts."))
	rec, err = c.Retry()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := roles(srv.last()), []string{"system", "user"}; !slices.Equal(got, want) {
		t.Errorf("retry roles: got %v, want %v", got, want)
	}
	if got, want := rec.Messages(), []string{"The plan has three parts."}; !slices.Equal(got, want) {
		t.Errorf("retry text: got %q, want %q", got, want)
	}
	// The next turn sees the finished reply only.
	srv.then(text("You're welcome."))
	c.MustSend("Thanks")
	if got, want := roles(srv.last()), []string{"system", "user", "assistant", "user"}; !slices.Equal(got, want) {
		t.Errorf("roles: got %v, want %v", got, want)
	}
	if got := srv.last().Messages[2].Content; got != "The plan has three parts." {
		t.Errorf("assistant message: got %q", got)
	}
}

func TestStep_InvalidToolArgumentsThenValid(t *testing.T) {
	srv := newFakeServer(t,
		toolCalls("", askCall("call_bad", `{"prompt": "Which city?", "request_type": `)),
		toolCalls("", askCall("call_good", `{"prompt": "Which city?", "request_type": "clarification"}`)),
	)
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Plan a party")
	qs := rec.Questions()
	if len(qs) != 1 || qs[0].Key != "call_good" {
		t.Fatalf("questions: got %+v, want one for call_good", qs)
	}
	reqs := srv.sent()
	if len(reqs) != 2 {
		t.Fatalf("sent %d requests, want 2", len(reqs))
	}
	retry := reqs[1]
	if got, want := roles(retry), []string{"system", "user", "assistant", "tool"}; !slices.Equal(got, want) {
		t.Fatalf("retry roles: got %v, want %v", got, want)
	}
	if tc := retry.Messages[2].ToolCalls; len(tc) != 1 || tc[0].ID != "call_bad" || tc[0].Function.Arguments != `{"prompt": "Which city?", "request_type": ` {
		t.Errorf("retry assistant turn: got %+v", tc)
	}
	told := retry.Messages[3]
	if told.ToolCallID != "call_bad" || !strings.Contains(told.Content, "not valid JSON") || !strings.Contains(told.Content, "Expected arguments") {
		t.Errorf("the model was told: %+v", told)
	}

	// After the answer both turns are in the history, each with its results.
	c.Answer(qs[0], form("answer", "Lisbon"))
	srv.then(text("Lisbon it is."))
	c.MustResume()
	if got, want := roles(srv.last()), []string{"system", "user", "assistant", "tool", "assistant", "tool"}; !slices.Equal(got, want) {
		t.Fatalf("roles: got %v, want %v", got, want)
	}
	if got, want := srv.last().Messages[5].Content, `{"outcome":"answered","values":{"answer":"Lisbon"}}`; got != want {
		t.Errorf("result: got %s, want %s", got, want)
	}
}

func TestStep_InvalidToolArgumentsGiveUp(t *testing.T) {
	bad := toolCalls("", askCall("", `{"prompt": 42}`), call{id: "call_x", name: "search_web", args: []string{`{}`}})
	srv := newFakeServer(t, bad, bad, bad)
	c := newConvo(t, newAgent(t, srv.url()))
	rec, err := c.Send("Plan a party")
	wantFault(t, err, "could not be used after 3 tries")
	if len(srv.sent()) != 3 {
		t.Errorf("sent %d requests, want 3", len(srv.sent()))
	}
	if len(rec.Questions()) != 0 {
		t.Errorf("asked %d questions, want none", len(rec.Questions()))
	}
	last := srv.last()
	// Every call of every try is answered, in order, and ids are filled in where missing.
	if got, want := roles(last), []string{"system", "user", "assistant", "tool", "tool", "assistant", "tool", "tool"}; !slices.Equal(got, want) {
		t.Fatalf("roles: got %v, want %v", got, want)
	}
	for _, i := range []int{2, 5} {
		calls := last.Messages[i].ToolCalls
		if len(calls) != 2 || calls[0].ID == "" || calls[0].ID != last.Messages[i+1].ToolCallID || calls[1].ID != last.Messages[i+2].ToolCallID {
			t.Errorf("turn %d: calls %+v, results %q %q", i, calls, last.Messages[i+1].ToolCallID, last.Messages[i+2].ToolCallID)
		}
	}
	if got := last.Messages[4].Content; !strings.Contains(got, `there is no tool \"search_web\"`) {
		t.Errorf("unknown tool result: %s", got)
	}
}

func TestStep_Cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.chunk(map[string]any{"role": "assistant", "content": "Start"}, "")
		<-r.Context().Done()
	})
	c := newConvo(t, newAgent(t, srv.url()))
	c.Ctx, c.OnText = ctx, func(string) { cancel() }
	rec, err := c.Send("Hi")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// The open message is left to the runner, which keeps it as interrupted.
	var got []domain.Event
	for _, ev := range rec.Events {
		if ev.Kind == domain.EventAgentMessage {
			got = append(got, ev)
		}
	}
	if len(got) != 1 || got[0].Text != "Start" || !got[0].Interrupted {
		t.Errorf("messages: got %+v, want one interrupted \"Start\"", got)
	}
}

// A model that takes long before its first byte (loading, a long prompt) is not stalled until
// the first-byte timeout; the error then says so.
func TestStep_SlowFirstByte(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) {
		c.IdleTimeout = 50 * time.Millisecond
		c.FirstByteTimeout = 300 * time.Millisecond
	}))
	start := time.Now()
	_, err := c.Send("Think hard")
	wantFault(t, err, "sent nothing for 300ms after the request", "first_byte_timeout")
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("gave up after %s, before the first-byte timeout", d)
	}
}
