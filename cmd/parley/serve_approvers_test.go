package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// deleteModel is a model that deletes the branch a conversation names with the demo tool
// server's delete_branch, and says what the tool answered; it counts the tool's results.
func deleteModel(results *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		msgs := chatMessages(r)
		send := streamChunks(w)
		last := msgs[len(msgs)-1]
		if last.Role == "tool" {
			results.Add(1)
			send(map[string]any{"role": "assistant", "content": fmt.Sprintf("The tool says: %v", last.Content)}, nil)
			send(map[string]any{}, "stop")
		} else {
			call := map[string]any{"index": 0, "id": "call_1", "type": "function",
				"function": map[string]any{"name": "demo__delete_branch", "arguments": `{"branch":"feature/x"}`}}
			send(map[string]any{"role": "assistant", "content": ""}, nil)
			send(map[string]any{"tool_calls": []any{call}}, nil)
			send(map[string]any{}, "tool_calls")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// An agent's approval gate routed to two of ops outlives Parley's stops: one approval is
// given, Parley is stopped (SIGTERM: within the grace) and killed (-9), the approval and the
// question stand, the asker still cannot approve, and the second approval runs the tool,
// once. The group is made with `parley group add`, before the server and beside it.
func TestServe_RoutedApprovalsThroughSIGTERMAndKill9(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	ann := strings.TrimSpace(annWithToken(t, db)) // the first account: staff, who asks here as anyone would
	tokens := map[string]string{}
	for _, who := range []string{"bob", "cy"} {
		if _, err := runMain(nil, "pw-for-the-tests-1\n", "user", "add", who, "--password-stdin", "--db", db); err != nil {
			t.Fatal(err)
		}
		out, err := runMain(nil, "", "token", "add", "laptop", "--user", who, "--db", db)
		if err != nil {
			t.Fatal(err)
		}
		tokens[who] = strings.TrimSpace(out)
	}
	if out, err := runMain(nil, "", "group", "add", "ops", "ann", "bob", "--db", db); err != nil {
		t.Fatalf("group add: %v %s", err, out)
	}
	var results atomic.Int64
	model := httptest.NewServer(deleteModel(&results))
	defer model.Close()
	self, _ := os.Executable()
	config := filepath.Join(dir, "agents.toml")
	os.WriteFile(config, fmt.Appendf(nil, `
[[agents]]
name = "git"
title = "Git helper"
base_url = %q
model = "fake"
access = ["everyone"]
approvers = "group:ops"
approvals = 2

  [[agents.mcp]]
  name = "demo"
  command = %q
  args = ["mcp-demo"]
  env = { PARLEY_TEST_MAIN = "1" }
  approve_tools = ["delete_branch"]
`, model.URL+"/v1", self), 0o600)

	var l *liveServer
	var logs *syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last server's log:\n%s", logs.String())
		}
	})
	start := func() {
		logs = &syncBuffer{}
		l = serveLive(t, ann, logs, "--db", db, "--config", config)
		waitFor(t, "the tool server", func() bool { return strings.Contains(logs.String(), "tool server ready") })
	}
	as := func(token string) *liveServer { return &liveServer{URL: l.URL, Token: token} }
	start()
	// cy joins ops from the command line beside the running server.
	if out, err := runMain(nil, "", "group", "add", "ops", "cy", "--db", db); err != nil {
		t.Fatalf("group add beside the server: %v %s", err, out)
	}
	var created struct {
		Conversation struct {
			ID int64 `json:"id"`
		} `json:"conversation"`
	}
	if code := l.api(t, http.MethodPost, "/conversations", map[string]any{"agent": "git", "text": "Delete the branch feature/x"}, &created); code != http.StatusCreated {
		t.Fatalf("start = %d", code)
	}
	var question int64
	waitFor(t, "the routed approval", func() bool {
		var qs struct {
			Questions []testQuestion `json:"questions"`
		}
		as(tokens["bob"]).api(t, http.MethodGet, "/questions", nil, &qs)
		if len(qs.Questions) == 1 {
			question = qs.Questions[0].ID
		}
		return question != 0
	})
	path := fmt.Sprintf("/questions/%d", question)
	approve := func(token string) int {
		return as(token).api(t, http.MethodPost, path+"/answer", map[string]any{"values": map[string]any{"branch": "feature/x"}}, nil)
	}
	if code := approve(ann); code != http.StatusForbidden {
		t.Fatalf("the asker approves = %d", code)
	}
	if code := approve(tokens["bob"]); code != http.StatusOK {
		t.Fatalf("bob approves = %d", code)
	}
	terminate(t, l, logs)
	start()
	var q struct {
		State    string           `json:"state"`
		Approved []map[string]any `json:"approved"`
	}
	as(tokens["cy"]).api(t, http.MethodGet, path, nil, &q)
	if q.State != "pending" || len(q.Approved) != 1 || q.Approved[0]["by"] != "bob" {
		t.Fatalf("after SIGTERM the question is %+v, want pending with bob's approval", q)
	}
	l.cmd.Process.Kill()
	l.cmd.Wait()
	start()
	if code := approve(ann); code != http.StatusForbidden {
		t.Fatalf("the asker approves after kill -9 = %d", code)
	}
	if code := approve(tokens["cy"]); code != http.StatusOK {
		t.Fatalf("cy approves = %d", code)
	}
	var page struct {
		Conversation struct {
			State string `json:"state"`
		} `json:"conversation"`
		Messages []struct {
			Text string `json:"text"`
		} `json:"messages"`
	}
	waitFor(t, "the tool's run", func() bool {
		l.api(t, http.MethodGet, fmt.Sprintf("/conversations/%d", created.Conversation.ID), nil, &page)
		return page.Conversation.State == "done"
	})
	last := page.Messages[len(page.Messages)-1].Text
	if !strings.Contains(last, "The tool says:") || !strings.Contains(last, "feature/x") || results.Load() != 1 {
		t.Errorf("the reply is %q after %d tool results, want the tool's once", last, results.Load())
	}
}
