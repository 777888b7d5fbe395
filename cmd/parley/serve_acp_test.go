package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/domain"
)

// acpPIDs reads, from the test agent's event log, the pids of its processes that started,
// and those and the processes they started themselves.
func acpPIDs(t *testing.T, log string) (agents, all []int) {
	t.Helper()
	b, _ := os.ReadFile(log)
	for _, line := range strings.Split(string(b), "\n") {
		var l struct {
			PID   int    `json:"pid"`
			Event string `json:"event"`
			Child int    `json:"child"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		switch l.Event {
		case "start":
			agents, all = append(agents, l.PID), append(all, l.PID)
		case "grandchild":
			all = append(all, l.Child)
		}
	}
	return agents, all
}

func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || !strings.Contains(string(b), ") Z ")
}

// TestServe_ACodingAgentsPermissionThroughSIGTERMKill9AndItsDeath asks through a coding
// agent built on @agentclientprotocol/sdk, and ends what the question waits on while it
// waits: Parley by SIGTERM (it exits within the grace), Parley by kill -9 (nothing is lost),
// and the agent's own process. Each time the question expires with the reason, no agent
// process is left, and the next try asks again in a new session; the last answer, Allow,
// changes the file in the person's workspace ({person} in cwd), made for them.
func TestServe_ACodingAgentsPermissionThroughSIGTERMKill9AndItsDeath(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	root, err := backendtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(dir, "agent.log")
	db := filepath.Join(dir, "p.db")
	out := annWithToken(t, db)
	config := filepath.Join(dir, "agents.toml")
	os.WriteFile(config, fmt.Appendf(nil, `
[[agents]]
name = "coder"
title = "Coding agent"
backend = "acp"
command = %q
args = [%q]
cwd = %q
env = { ACP_TEST_LOG = %q, ACP_TEST_GRANDCHILD = "1" }
`, node, filepath.Join(root, "backend", "acp", "testdata", "agent.mjs"), filepath.Join(work, "{person}"), agentLog), 0o600)

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
		return serveLive(t, out, logs, "--db", db, "--config", config)
	}
	var created api.ConversationCreated
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
	// asked waits for the nth question, pending, and checks what the person is asked.
	asked := func(n int) testQuestion {
		t.Helper()
		var qs []testQuestion
		waitFor(t, fmt.Sprintf("question %d", n), func() bool {
			_, qs = state()
			return len(qs) == n && qs[n-1].State == "pending"
		})
		var q domain.Question
		l.api(t, http.MethodGet, fmt.Sprintf("/questions/%d", qs[n-1].ID), nil, &q)
		var labels []string
		for _, o := range q.Fields[0].Options {
			labels = append(labels, o.Label)
		}
		if !q.Live || !q.Choice || q.Holder != "coding agent" || !slices.Equal(labels, []string{"Allow", "Always allow edits", "Reject", "Never allow edits"}) {
			t.Fatalf("question %d = %+v", n, q)
		}
		return qs[n-1]
	}
	// expired checks the nth question expired with the reason, and the run's state.
	expired := func(n int, wantState, reason string) {
		t.Helper()
		var st string
		var qs []testQuestion
		waitFor(t, "the question to expire", func() bool {
			st, qs = state()
			return st == wantState && len(qs) >= n && qs[n-1].State == "expired"
		})
		if !strings.Contains(qs[n-1].Resolution.Reason, reason) {
			t.Fatalf("question %d expired with %q, want %q", n, qs[n-1].Resolution.Reason, reason)
		}
	}
	gone := func(how string) {
		t.Helper()
		_, pids := acpPIDs(t, agentLog)
		if len(pids) == 0 {
			t.Fatal("no process of the agent started")
		}
		waitFor(t, "the agent's processes to end after "+how, func() bool { return !slices.ContainsFunc(pids, processAlive) })
	}
	retry := func() {
		t.Helper()
		if code := l.api(t, http.MethodPost, fmt.Sprintf("/conversations/%d/retry", conv.ID), map[string]any{}, nil); code != http.StatusNoContent {
			t.Fatalf("retry = %d", code)
		}
	}

	l = start()
	if code := l.api(t, http.MethodPost, "/conversations", api.NewConversation{Agent: "coder", Text: "Please edit the notes"}, &created); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	asked(1)

	// SIGTERM while the question waits: Parley ends within the grace, and the agent with it.
	took := terminate(t, l, logs)
	t.Logf("SIGTERM with a permission question waiting: exited in %s", took.Round(time.Millisecond))
	gone("SIGTERM")
	l = start()
	expired(1, string(domain.StateInterrupted), "Parley stopped while the coding agent waited for this answer")
	retry()
	asked(2)

	// kill -9: the agent is told Parley died, and ends too; nothing committed is lost.
	l.cmd.Process.Kill()
	l.cmd.Wait()
	gone("kill -9")
	l = start()
	expired(2, string(domain.StateInterrupted), "Parley stopped while the coding agent waited")
	retry()
	asked(3)

	// The agent dies while it waits: the question expires, the run fails saying why.
	agents, _ := acpPIDs(t, agentLog)
	syscall.Kill(agents[len(agents)-1], syscall.SIGKILL)
	expired(3, string(domain.StateFailed), "The coding agent's session ended.")
	// The question expires as the step fails; the failure is logged just after.
	waitFor(t, "the run's error to say the agent's process ended", func() bool {
		return strings.Contains(logs.String(), "Coding agent: the agent's process ended (signal: killed)")
	})
	retry()
	q := asked(4)

	if code := l.api(t, http.MethodPost, fmt.Sprintf("/questions/%d/answer", q.ID), map[string]any{"values": map[string]any{"option": "allow-once"}}, nil); code != http.StatusOK {
		t.Fatalf("answer = %d", code)
	}
	waitFor(t, "the run to end", func() bool { st, _ := state(); return st == string(domain.StateDone) })
	if b, _ := os.ReadFile(filepath.Join(work, "ann", "notes.txt")); string(b) != "hello from the agent\n" {
		t.Errorf("ann's notes.txt = %q", b)
	}
	if fi, err := os.Stat(filepath.Join(work, "ann")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("ann's workspace: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(work, "notes.txt")); err == nil {
		t.Errorf("the agent wrote outside ann's workspace")
	}
}
