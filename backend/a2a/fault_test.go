package a2a_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/backend/a2a"
	"github.com/parley-chat/parley/domain"
)

// Raw events of a task t1 in context c1.
const (
	rawTask    = `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}`
	rawWorking = `{"kind":"status-update","taskId":"t1","contextId":"c1","final":false,"status":{"state":"working"}}`
	rawDone    = `{"kind":"status-update","taskId":"t1","contextId":"c1","final":true,"status":{"state":"completed"}}`
)

func rawArtifact(name, parts string) string {
	return `{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a-` + name + `","name":"` + name + `","parts":[` + parts + `]}}`
}

// wantFault runs one message against the agent and checks the step failed naming the agent
// and saying each of want.
func wantFault(t *testing.T, a domain.Agent, want ...string) *recorder {
	t.Helper()
	rec, err := newConvo(t, a).Send("Do it")
	if err == nil {
		t.Fatalf("got no error, messages %q", rec.Messages())
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, a.Info().Title+": ") {
		t.Errorf("error %q does not name the agent %q", msg, a.Info().Title)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	return rec
}

func TestAgent_Unreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	a, err := a2a.New(context.Background(), a2a.Config{Name: "remote", Title: "Remote helper", Description: "From the config.", CardURL: "http://" + addr})
	if err != nil {
		t.Fatalf("New failed for an agent that is down: %v", err)
	}
	if info := a.Info(); info.Title != "Remote helper" || info.Description != "From the config." {
		t.Errorf("got info %+v, want the config's", info)
	}
	wantFault(t, a, "cannot reach the agent at http://"+addr, "connection refused")
}

func TestAgent_Faults(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		change  func(*a2a.Config)
		want    []string
		// kept is the partial text that must survive the fault.
		kept string
	}{
		{
			name: "JSONRPCError",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"model backend down"}}`))
			},
			want: []string{"answered message/stream with an error: model backend down [JSON-RPC -32603, internal error]"},
		},
		{
			name: "ErrorInsideStream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, result(rawTask), rawArtifactResult("partial_result", `{"kind":"text","text":"Checking"}`),
					`{"jsonrpc":"2.0","id":"1","error":{"code":-32000,"message":"tool crashed","data":{"error":"jira timeout"}}}`)
			},
			want: []string{"reported an error in the middle of message/stream: tool crashed (jira timeout) [JSON-RPC -32000]"},
			kept: "Checking",
		},
		{
			name: "HTTPStatus",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"error":"overloaded"}`))
			},
			want: []string{"HTTP 503 Service Unavailable: overloaded"},
		},
		{
			name: "StreamCutMidArtifact",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, result(rawTask), result(rawWorking), rawArtifactResult("partial_result", `{"kind":"text","text":"Half a sen"}`))
			},
			want: []string{`stream ended before the task finished (last state "working")`},
			kept: "Half a sen",
		},
		{
			name: "Stalled",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, result(rawTask))
				<-r.Context().Done()
			},
			change: func(c *a2a.Config) { c.IdleTimeout = 200 * time.Millisecond },
			want:   []string{"sent nothing for 200ms during message/stream"},
		},
		{
			name: "OversizedEvent",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, result(rawTask), rawArtifactResult("partial_result", `{"kind":"text","text":"`+strings.Repeat("x", 100<<10)+`"}`))
			},
			change: func(c *a2a.Config) { c.MaxArtifactBytes = 1000 },
			want:   []string{"more than the limit of 1000 bytes (max_artifact_bytes)"},
		},
		{
			name: "TerminalFailure",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, result(rawTask), result(`{"kind":"status-update","taskId":"t1","contextId":"c1","final":true,"status":{"state":"failed","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"quota exceeded"}]}}}`))
			},
			want: []string{"the agent reported the task as failed: quota exceeded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRemote(t)
			r.setOverride(tt.handler)
			change := []func(*a2a.Config){}
			if tt.change != nil {
				change = append(change, tt.change)
			}
			rec := wantFault(t, r.agent(change...), tt.want...)
			if tt.kept != "" {
				if m := rec.Messages(); len(m) != 1 || m[0] != tt.kept {
					t.Errorf("got messages %q, want the partial text %q kept", m, tt.kept)
				}
			}
		})
	}
}

func rawArtifactResult(name, parts string) string { return result(rawArtifact(name, parts)) }

func TestAgent_StreamCutThenRetry(t *testing.T) {
	r := newRemote(t, turn{final(sdk.TextPart{Text: "Done after all."}), completed()})
	r.setOverride(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sse(w, result(rawTask), result(rawWorking))
	}))
	c := newConvo(t, r.agent())
	if _, err := c.Send("Do it"); err == nil {
		t.Fatal("got no error for a cut stream")
	}
	// The remote forgot task t1 (it never had it): a Retry says so instead of guessing.
	r.setOverride(nil)
	_, err := c.Retry()
	if err == nil || !strings.Contains(err.Error(), "no longer knows the task") {
		t.Fatalf("got %v, want the task reported lost", err)
	}
	// The next message starts a new task in the same context.
	rec := c.MustSend("Try again")
	if m := rec.Messages(); len(m) != 1 || m[0] != "Done after all." {
		t.Errorf("got messages %q", m)
	}
	if got := r.received()[0]; got.contextID != "c1" || !got.newTask || !strings.Contains(got.msg.Parts[0].(sdk.TextPart).Text, "Try again") {
		t.Errorf("got %+v, want a new task in context c1", got)
	}
}

func TestAgent_UnknownPartKind(t *testing.T) {
	r := newRemote(t)
	r.setOverride(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sse(w, result(rawTask),
			rawArtifactResult("final_result", `{"kind":"text","text":"Here is the chart."},{"kind":"image","url":"https://x/y.png"},{"text":"no kind"}`),
			result(rawDone))
	}))
	rec := newConvo(t, r.agent()).MustSend("Chart it")
	m := rec.Messages()
	if len(m) != 1 || !strings.HasPrefix(m[0], "Here is the chart.") ||
		!strings.Contains(m[0], `skipped a part of kind "image"`) || !strings.Contains(m[0], `skipped a part of kind "(none)"`) {
		t.Errorf("got messages %q, want the text and notes for the skipped parts", m)
	}
}

// The agent's stream is read by the WHATWG's rules for an event stream, whatever line ends,
// byte-order mark, comments, fields and data lines it comes with.
func TestAgent_StreamForms(t *testing.T) {
	// The first event holds the text, so that it is not lost to a byte-order mark.
	events := []string{rawArtifactResult("final_result", `{"kind":"text","text":"Done."}`), result(rawTask), result(rawDone)}
	for name, form := range map[string]func(i int, e string) string{
		"CR":   func(_ int, e string) string { return "data: " + e + "\r\r" },
		"CRLF": func(_ int, e string) string { return "data: " + e + "\r\n\r\n" },
		"BOM": func(i int, e string) string {
			if i == 0 {
				return "\xef\xbb\xbfdata: " + e + "\n\n"
			}
			return "data: " + e + "\n\n"
		},
		"Comments":  func(_ int, e string) string { return ": keep-alive\r\n\r\ndata: " + e + "\r\n: more\r\n\r\n" },
		"DataLines": func(_ int, e string) string { return "data: " + strings.ReplaceAll(e, ",", ",\rdata:") + "\r\n\n" },
		"Fields": func(i int, e string) string {
			return fmt.Sprintf("id: %d\nevent: message\nretry: 10\ndata:%s\n\n", i, e)
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRemote(t)
			r.setOverride(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for i, e := range events {
					_, _ = io.WriteString(w, form(i, e))
					w.(http.Flusher).Flush()
				}
			}))
			rec := newConvo(t, r.agent()).MustSend("Do it")
			if m := rec.Messages(); len(m) != 1 || m[0] != "Done." {
				t.Errorf("got messages %q, want the result", m)
			}
		})
	}
}

func TestAgent_ArtifactSize(t *testing.T) {
	t.Run("OverTheLimit", func(t *testing.T) {
		chunk := strings.Repeat("y", 600)
		r := newRemote(t, turn{partial(chunk), partial(chunk), partial(chunk), completed()})
		rec := wantFault(t, r.agent(func(c *a2a.Config) { c.MaxArtifactBytes = 1000 }), `artifact ("partial_result") of more than 1000 bytes`)
		if m := rec.Messages(); len(m) != 1 || m[0] != chunk {
			t.Errorf("got %d messages, want the first chunk kept", len(m))
		}
	})
	t.Run("LongEventsUnderTheLimit", func(t *testing.T) {
		// Longer than the SDK's SSE reader takes in one line (64 KiB).
		long := strings.Repeat("z", 200<<10)
		r := newRemote(t, turn{final(sdk.TextPart{Text: long}), completed()})
		rec := newConvo(t, r.agent()).MustSend("Dump it")
		if m := rec.Messages(); len(m) != 1 || m[0] != long {
			t.Errorf("got %d messages, want the long result whole", len(m))
		}
	})
}
