package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/agent/mcp/mcptest"
)

// toolModel is a model that calls the reference MCP server's form tool on the person's
// message, and says what the tool returned once it has.
type toolModel struct {
	mu      sync.Mutex
	results []string // the tool results it was sent, in order
}

func (m *toolModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	messages := chatMessages(r)
	last := messages[len(messages)-1]
	send := streamChunks(w)
	if last.Role == "tool" {
		text, _ := last.Content.(string)
		m.mu.Lock()
		m.results = append(m.results, text)
		m.mu.Unlock()
		send(map[string]any{"role": "assistant", "content": "The tool said: " + strings.SplitN(text, "\n", 2)[0]}, nil)
		send(map[string]any{}, "stop")
	} else {
		send(map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"index": 0, "id": "call_form", "type": "function",
			"function": map[string]any{"name": "ref__trigger-elicitation-request", "arguments": "{}"}}}}, nil)
		send(map[string]any{}, "tool_calls")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (m *toolModel) lastResult() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.results) == 0 {
		return ""
	}
	return m.results[len(m.results)-1]
}

// TestServe_AToolServersQuestionThroughSIGTERMAndKill9 asks through the MCP project's
// reference server, which asks in the middle of the call, and stops Parley while the
// question waits: SIGTERM ends the process within the grace, and kill -9 loses nothing;
// after each restart the question is expired with the reason, the run is cut off, and Retry
// asks again. The last answer reaches the tool and the model.
func TestServe_AToolServersQuestionThroughSIGTERMAndKill9(t *testing.T) {
	ref, err := mcptest.Everything("ref")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	out := annWithToken(t, db)
	model := &toolModel{}
	modelSrv := httptest.NewServer(model)
	defer modelSrv.Close()
	config := filepath.Join(dir, "agents.toml")
	os.WriteFile(config, fmt.Appendf(nil, `
[[agents]]
name = "ops"
title = "Ops"
base_url = %q
model = "fake"

  [[agents.mcp]]
  name = "ref"
  command = "node"
  args = [%q, "stdio"]
`, modelSrv.URL+"/v1", ref.Args[0]), 0o600)

	var l *liveServer
	var logs *syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last server's log:\n%s", logs.String())
		}
	})
	start := func() *liveServer {
		t.Helper()
		logs = &syncBuffer{}
		l := serveLive(t, out, logs, "--db", db, "--config", config)
		waitFor(t, "the tool server", func() bool { return strings.Contains(logs.String(), "tool server ready") })
		return l
	}
	var created struct {
		Conversation struct {
			ID int64 `json:"id"`
		} `json:"conversation"`
	}
	conv := &created.Conversation
	state := func() (string, []testQuestion) {
		var page struct {
			Conversation struct {
				State string `json:"state"`
			} `json:"conversation"`
			Questions []testQuestion `json:"questions"`
		}
		l.api(t, http.MethodGet, fmt.Sprintf("/conversations/%d", conv.ID), nil, &page)
		return page.Conversation.State, page.Questions
	}
	// asked waits for the nth question, pending, and checks the form the person sees.
	asked := func(n int) testQuestion {
		t.Helper()
		var qs []testQuestion
		waitFor(t, fmt.Sprintf("question %d", n), func() bool {
			_, qs = state()
			return len(qs) == n && qs[n-1].State == "pending"
		})
		var q struct {
			Fields  []agent.Field        `json:"fields"`
			Refused []agent.RefusedField `json:"refused"`
			Live    bool                 `json:"live"`
		}
		l.api(t, http.MethodGet, fmt.Sprintf("/questions/%d", qs[n-1].ID), nil, &q)
		// The optional email is left out, saying why; the other twelve fields are asked.
		if !q.Live || len(q.Fields) != 12 || len(q.Refused) != 1 || q.Refused[0].Name != "email" {
			t.Fatalf("question %d = %+v", n, q)
		}
		return qs[n-1]
	}
	// afterStop checks what a restart finds: the question expired with the reason, the run
	// cut off; Retry asks again.
	afterStop := func(n int) {
		t.Helper()
		st, qs := state()
		if st != string(agent.StateInterrupted) || qs[n-1].State != "expired" || qs[n-1].Resolution.Reason != agent.StoppedWhileAsked {
			t.Fatalf("after the restart: %s, %+v", st, qs[n-1])
		}
		if code := l.api(t, http.MethodPost, fmt.Sprintf("/conversations/%d/retry", conv.ID), map[string]any{}, nil); code != http.StatusNoContent {
			t.Fatalf("retry = %d", code)
		}
	}

	// gone checks that the tool servers a stopped parley started do not outlive it.
	gone := func(servers []int, how string) {
		t.Helper()
		if len(servers) == 0 {
			t.Fatal("no process of the tool server found")
		}
		waitFor(t, "the tool servers to end after "+how, func() bool {
			return !slices.ContainsFunc(servers, mcptest.Alive)
		})
	}
	servers := func() []int { return mcptest.Children(l.cmd.Process.Pid, ref.Args[0]) }

	l = start()
	if code := l.api(t, http.MethodPost, "/conversations", map[string]any{"agent": "ops", "text": "Fill in the form"}, &created); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	asked(1)

	// SIGTERM while the question waits: the process ends, cleanly, within the grace.
	running := servers()
	took := terminate(t, l, logs)
	t.Logf("SIGTERM with a question waiting: exited in %s", took.Round(time.Millisecond))
	gone(running, "SIGTERM")
	l = start()
	afterStop(1)
	asked(2)

	// kill -9 while it waits again: nothing is lost, and the same holds. The tool server is
	// told that Parley died, and ends too.
	running = servers()
	l.cmd.Process.Kill()
	l.cmd.Wait()
	gone(running, "kill -9")
	l = start()
	afterStop(2)
	q := asked(3)

	if code := l.api(t, http.MethodPost, fmt.Sprintf("/questions/%d/answer", q.ID), map[string]any{"values": map[string]any{"name": "Ann Example"}}, nil); code != http.StatusOK {
		t.Fatalf("answer = %d", code)
	}
	waitFor(t, "the run to end", func() bool { st, _ := state(); return st == string(agent.StateDone) })
	if got := model.lastResult(); !strings.Contains(got, "- Name: Ann Example") {
		t.Errorf("the model was told %q", got)
	}
}
