package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/domain"
)

// TestServe_A2ARepliesThroughSIGTERMAndKill9 has three conversations at once ask a remote
// agent over A2A (another Parley, serving its event planner on a2a-go's server), and stops
// the Parley that asked while the remote tasks run: SIGTERM ends it within the grace, kill -9
// loses nothing, and after each restart every conversation takes its remote task up again and
// finishes with the whole plan, once.
func TestServe_A2ARepliesThroughSIGTERMAndKill9(t *testing.T) {
	dir := t.TempDir()
	remoteLogs := &syncBuffer{}
	remoteCmd := serveCommand("--db", filepath.Join(dir, "remote.db"), "--a2a")
	remoteCmd.Env = append(remoteCmd.Env, "PARLEY_A2A_TOKEN=t0k3n", "PARLEY_BENCH_AGENT=1")
	remote, err := startServe(remoteCmd, remoteLogs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { remoteCmd.Process.Kill(); remoteCmd.Wait() })

	db := filepath.Join(dir, "p.db")
	token := annWithToken(t, db)
	config := filepath.Join(dir, "agents.toml")
	os.WriteFile(config, fmt.Appendf(nil, "[[agents]]\nname = \"remote-planner\"\nbackend = \"a2a\"\ncard_url = %q\napi_key = \"t0k3n\"\n",
		remote+"/a2a/bench"), 0o600)
	var l *liveServer
	var logs *syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last server's log:\n%s\nthe remote's log:\n%s", logs.String(), remoteLogs.String())
		}
	})
	start := func() {
		t.Helper()
		logs = &syncBuffer{}
		l = serveLive(t, token, logs, "--db", db, "--config", config)
	}
	type page = api.ConversationState
	get := func(id int64) page {
		var p page
		l.api(t, http.MethodGet, fmt.Sprintf("/conversations/%d", id), nil, &p)
		return p
	}
	// The remote agent writes a Markdown reply at 25 tokens a second, for about 5 seconds.
	var request, reply string
	asked := 0
	startThree := func() []int64 {
		t.Helper()
		plan := builtin.BenchPlan{Start: time.Now(), Rate: 25, Tokens: 125}
		request, reply = plan.String(), strings.Join(plan.Reply(), "")
		var ids []int64
		for range 3 {
			var created api.ConversationCreated
			if code := l.api(t, http.MethodPost, "/conversations", api.NewConversation{Agent: "remote-planner", Text: request}, &created); code != http.StatusCreated {
				t.Fatalf("create = %d", code)
			}
			ids = append(ids, created.Conversation.ID)
		}
		// The remote agent has the three messages and writes its replies (Parley's A2A server
		// sends a message when it is whole); here the three runs wait on its streams.
		asked += 3
		waitFor(t, "the remote agent to take the three messages", func() bool {
			return strings.Count(remoteLogs.String(), "msg=intake") >= asked
		})
		for _, id := range ids {
			if p := get(id); p.Conversation.State != string(domain.StateRunning) {
				t.Fatalf("conversation %d is %s, want it running", id, p.Conversation.State)
			}
		}
		return ids
	}
	// finished checks that each conversation took its remote task up again after the restart
	// and ended with the remote agent's reply, whole, once.
	finished := func(ids []int64, stop string) {
		t.Helper()
		for _, id := range ids {
			var p page
			waitFor(t, fmt.Sprintf("conversation %d to finish after %s", id, stop), func() bool {
				p = get(id)
				return p.Conversation.State == string(domain.StateDone)
			})
			var whole int
			for _, m := range p.Messages {
				if m.Role == "agent" && m.Text == reply {
					whole++
				}
			}
			if len(p.Messages) == 0 || p.Messages[0].Role != "user" || p.Messages[0].Text != request || whole != 1 {
				t.Errorf("conversation %d after %s: the reply whole %d times in %.300q", id, stop, whole, fmt.Sprint(p.Messages))
			}
		}
	}

	start()
	ids := startThree()
	took := terminate(t, l, logs)
	t.Logf("SIGTERM with three A2A replies streaming: stopped in %s", took)
	start()
	finished(ids, "SIGTERM")

	ids = startThree()
	l.cmd.Process.Kill()
	l.cmd.Wait()
	start()
	finished(ids, "kill -9")
}
