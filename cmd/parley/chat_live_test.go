package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The chat tests run Parley itself: `parley serve` on a temporary database, with a fake
// model behind an agent, and `parley chat` against it, each a child process of the test
// binary (TestMain runs main when PARLEY_TEST_MAIN is set). The tests of the client's
// parts, without a server, are package chat's.

func TestMain(m *testing.M) {
	if os.Getenv("PARLEY_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	liveOnce.stop()
	os.Exit(code)
}

// waitLong bounds every wait on a child: generous, for a busy machine under -race.
const waitLong = 90 * time.Second

// fakeScripts are the questions the fake model asks (request_user_input arguments), one
// after the other, chosen by the conversation's first message.
var fakeScripts = map[string][]string{
	"every kind": {`{"prompt": "Tell me about the event.", "request_type": "clarification",
		"context": {"note": "a test of every field kind"},
		"fields": [
			{"name": "title", "label": "Title", "kind": "text", "required": true, "maxLength": 40},
			{"name": "notes", "label": "Notes", "kind": "textarea", "description": "Anything else."},
			{"name": "budget", "label": "Budget", "kind": "number", "min": 0, "max": 10000},
			{"name": "guests", "label": "Guests", "kind": "integer", "min": 1, "max": 500, "required": true},
			{"name": "venue", "label": "Venue", "kind": "select", "required": true, "options": [
				{"value": "hall", "label": "Town hall"}, {"value": "park", "label": "City park"}, {"value": "other", "label": "Something else"}]},
			{"name": "other", "label": "Other venue", "kind": "text"},
			{"name": "dietary", "label": "Dietary needs", "kind": "multiselect", "options": [
				{"value": "vegetarian"}, {"value": "vegan"}, {"value": "gluten-free"}]},
			{"name": "outdoor", "label": "Outdoors", "kind": "boolean"},
			{"name": "day", "label": "Day", "kind": "date"},
			{"name": "agenda", "label": "Agenda", "kind": "file"}]}`},
	"two questions": {
		`{"prompt": "Where and for how many?", "request_type": "clarification", "fields": [
			{"name": "city", "label": "City", "kind": "text", "required": true},
			{"name": "guests", "label": "Guests", "kind": "integer", "min": 1, "max": 500, "required": true}]}`,
		`{"prompt": "Which venue?", "request_type": "selection", "context": {"options": ["Museum", "Park"]}}`},
	"one question": {`{"prompt": "What is your name?", "request_type": "clarification", "fields": [
			{"name": "name", "label": "Your name", "kind": "text", "required": true}]}`},
}

// fakeAnswers counts the fake model's answers to "echo" conversations.
var fakeAnswers atomic.Int64

// fakeModel is an OpenAI-compatible chat-completions endpoint in the real streaming format:
// it asks its script's next question while the script has one, then answers in text. A
// conversation that starts with "echo" is answered with the last message and a count.
func fakeModel(w http.ResponseWriter, r *http.Request) {
	first, last, results := "", "", 0
	for _, m := range chatMessages(r) {
		switch m.Role {
		case "user":
			if s, ok := m.Content.(string); ok && first == "" {
				first = s
			}
			last, _ = m.Content.(string)
			results = 0
		case "tool":
			results++
		}
	}
	if first == "fail" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"error": {"message": "the model is overloaded", "type": "server_error"}}`)
		return
	}
	script := fakeScripts[strings.TrimSpace(first)]
	send := streamChunks(w)
	if first == "slow" && results == 0 {
		// Writes a little, then waits to be stopped.
		send(map[string]any{"role": "assistant", "content": "Working"}, nil)
		select {
		case <-r.Context().Done():
		case <-time.After(waitLong):
		}
		return
	}
	if results >= len(script) {
		pieces := []string{"Thanks, ", "all ", "noted."}
		switch {
		case first == "markdown":
			pieces = strings.SplitAfter(reply, " ")
		case strings.HasPrefix(first, "echo"):
			pieces = []string{"You said: ", last, fmt.Sprintf(" (answer %d)", fakeAnswers.Add(1))}
		}
		for _, piece := range pieces {
			send(map[string]any{"content": piece}, nil)
		}
		send(map[string]any{}, "stop")
	} else {
		var compact bytes.Buffer
		json.Compact(&compact, []byte(script[results]))
		args := compact.String()
		send(map[string]any{"role": "assistant", "content": "Let me ask. "}, nil)
		for i, piece := range []string{args[:len(args)/2], args[len(args)/2:]} {
			call := map[string]any{"index": 0, "function": map[string]any{"arguments": piece}}
			if i == 0 {
				call["id"], call["type"] = fmt.Sprintf("call_%d", results), "function"
				call["function"].(map[string]any)["name"] = "request_user_input"
			}
			send(map[string]any{"tool_calls": []any{call}}, nil)
		}
		send(map[string]any{}, "tool_calls")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// chatMessage is a message of a chat-completions request, as the fake models read it.
type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// chatMessages reads the messages of a chat-completions request.
func chatMessages(r *http.Request) []chatMessage {
	var body struct {
		Messages []chatMessage `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	return body.Messages
}

// streamChunks starts a streamed chat completion on w and returns send, which writes one
// chunk of it: a delta, and the finish reason (nil until the last).
func streamChunks(w http.ResponseWriter) func(delta map[string]any, finish any) {
	w.Header().Set("Content-Type", "text/event-stream")
	return func(delta map[string]any, finish any) {
		chunk := map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		j, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", j)
		w.(http.Flusher).Flush()
	}
}

// liveServer is a running `parley serve` with a person (ann) and her access token.
type liveServer struct {
	once  sync.Once
	err   error
	dir   string
	model *httptest.Server
	cmd   *exec.Cmd
	logs  syncBuffer
	URL   string
	Token string
}

var liveOnce liveServer

// live starts the server once for every test that needs it.
func live(t *testing.T) *liveServer {
	t.Helper()
	liveOnce.once.Do(liveOnce.start)
	if liveOnce.err != nil {
		t.Fatalf("start parley serve: %v\n%s", liveOnce.err, liveOnce.logs.String())
	}
	return &liveOnce
}

func (l *liveServer) start() {
	if l.dir, l.err = os.MkdirTemp("", "parley-chat-test"); l.err != nil {
		return
	}
	db := filepath.Join(l.dir, "p.db")
	if _, l.err = runMain(nil, "pw-for-the-tests-1\n", "user", "add", "ann", "--password-stdin", "--db", db); l.err != nil {
		return
	}
	out, err := runMain(nil, "", "token", "add", "laptop", "--user", "ann", "--db", db)
	if l.err = err; err != nil {
		return
	}
	l.Token = strings.TrimSpace(out)
	l.model = httptest.NewServer(http.HandlerFunc(fakeModel))
	l.cmd = serveCommand("--db", db)
	l.cmd.Env = append(l.cmd.Env, "PARLEY_OPENAI_BASE_URL="+l.model.URL+"/v1", "PARLEY_OPENAI_MODEL=fake", "PARLEY_MESSAGE_RATE=1000")
	l.URL, l.err = startServe(l.cmd, &l.logs)
}

func (l *liveServer) stop() {
	if l.cmd != nil && l.cmd.Process != nil {
		l.cmd.Process.Signal(syscall.SIGTERM)
		l.cmd.Wait()
	}
	if l.model != nil {
		l.model.Close()
	}
	if l.dir != "" {
		os.RemoveAll(l.dir)
	}
}

// mainCommand is a command that runs this binary's main with args.
func mainCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PARLEY_TEST_MAIN=1")
	return cmd
}

// runMain runs main with args and stdin to its end, and returns its output.
func runMain(env []string, stdin string, args ...string) (string, error) {
	cmd := mainCommand(args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("parley %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// chatEnv is the environment of a parley chat against the live server.
func (l *liveServer) chatEnv(t *testing.T) []string {
	t.Helper()
	return []string{"PARLEY_URL=" + l.URL, "PARLEY_TOKEN=" + l.Token, "XDG_CONFIG_HOME=" + t.TempDir()}
}

// api calls the JSON API as ann and decodes the answer into out.
func (l *liveServer) api(t *testing.T, method, path string, body, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, l.URL+"/api/v1"+path, r)
	req.Header.Set("Authorization", "Bearer "+l.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		dec := json.NewDecoder(resp.Body)
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// question is a question as GET /questions/{id} gives it, values as JSON numbers.
type testQuestion struct {
	ID         int64  `json:"id"`
	State      string `json:"state"`
	Resolution *struct {
		Outcome string         `json:"outcome"`
		Values  map[string]any `json:"values"`
		Reason  string         `json:"reason"`
		Via     string         `json:"via"`
	} `json:"resolution"`
}

// questions returns the questions of the conversation the chat printed ("Conversation N").
func (l *liveServer) questions(t *testing.T, output string) []testQuestion {
	t.Helper()
	m := regexp.MustCompile(`Conversation (\d+)`).FindStringSubmatch(output)
	if m == nil {
		t.Fatalf("no conversation id in the output:\n%s", output)
	}
	var page struct {
		Questions []testQuestion `json:"questions"`
	}
	l.api(t, http.MethodGet, "/conversations/"+m[1], nil, &page)
	return page.Questions
}

// waitFor polls cond until it holds, or fails the test after waitLong.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitLong); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
