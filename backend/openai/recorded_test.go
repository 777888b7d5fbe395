package openai_test

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
)

// recorded serves a recorded stream, as the server that sent it would, a few bytes at a time.
func recorded(t *testing.T, name string) respond {
	data, err := os.ReadFile("testdata/streams/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 37)
			w.Write(rest[:n])
			w.(http.Flusher).Flush()
			rest = rest[n:]
		}
	}
}

// Each server's recorded stream reaches the person as that server meant it: the reply, its
// tool calls as a form, or the error the server reported with the text that came before it.
func TestStep_RecordedStreams(t *testing.T) {
	for _, tc := range []struct {
		file     string
		messages []string
		fault    string
		form     bool
	}{
		{file: "openai-text.sse", messages: []string{"Sure — the café opens at *9:00* \"sharp\".\n\nBring 🎂."}},
		{file: "openai-refusal.sse", messages: []string{"I'm sorry, I can't help with that."}},
		{file: "openai-error.sse", messages: []string{"Partial answer"}, fault: "reported an error while streaming: The server had an error"},
		{file: "ollama-text.sse", messages: []string{"The offsite is booked."}},
		{file: "ollama-think-tools.sse", form: true},
		{file: "ollama-error.sse", messages: []string{"Hel"}, fault: "model runner has unexpectedly stopped"},
		{file: "error-without-blank-line.sse", messages: []string{"Hel"}, fault: "model runner has unexpectedly stopped"},
		{file: "vllm-reasoning-usage.sse", messages: []string{"Hi there!"}},
		{file: "vllm-tools.sse", form: true},
		{file: "vllm-error.sse", fault: "maximum context length is 8192 tokens"},
		{file: "llamacpp-text.sse", messages: []string{"Forty-two."}},
		{file: "llamacpp-error-line.sse", messages: []string{"Once"}, fault: "closed the stream before the reply was complete"},
		{file: "proxy-crlf-comments.sse", messages: []string{"crlf and comments"}},
		{file: "cut-mid-chunk.sse", messages: []string{"cut"}, fault: "closed the stream before the reply was complete"},
		{file: "malformed.sse", messages: []string{"ok"}, fault: "sent a malformed chunk"},
		{file: "multiline-data-length.sse", messages: []string{"multi"}, fault: "cut off by the model's length limit"},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".sse"), func(t *testing.T) {
			srv := newFakeServer(t, recorded(t, tc.file))
			c := newConvo(t, newAgent(t, srv.url()))
			rec, err := c.Send("Hi")
			if tc.fault != "" {
				wantFault(t, err, tc.fault)
			} else if err != nil {
				t.Fatal(err)
			}
			if got := rec.Messages(); !slices.Equal(got, tc.messages) {
				t.Errorf("messages: got %q, want %q", got, tc.messages)
			}
			if got := len(rec.Questions()) > 0; got != tc.form {
				t.Errorf("asked a form: %v, want %v", got, tc.form)
			}
		})
	}
}
