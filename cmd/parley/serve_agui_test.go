package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/agui/aguitest"
	"github.com/parley-chat/parley/domain"
)

// TestServe_AGUIInterruptsThroughSIGTERMAndKill9 asks through an AG-UI agent built on the
// protocol's packages, and stops Parley while its interrupts wait and another run streams:
// SIGTERM ends the process within the grace, kill -9 loses nothing, and after each restart
// the question is still pending; answering it resumes the agent, which needs no live
// connection, only the thread.
func TestServe_AGUIInterruptsThroughSIGTERMAndKill9(t *testing.T) {
	ta := aguitest.Start(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	out := annWithToken(t, db)
	config := filepath.Join(dir, "agents.toml")
	os.WriteFile(config, fmt.Appendf(nil, "[[agents]]\nname = \"research\"\nbackend = \"agui\"\nurl = %q\n", ta.URL), 0o600)

	var l *liveServer
	var logs *syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last server's log:\n%s", logs.String())
		}
	})
	start := func() {
		t.Helper()
		logs = &syncBuffer{}
		l = serveLive(t, out, logs, "--db", db, "--config", config)
	}
	type page struct {
		Conversation struct {
			State string `json:"state"`
		} `json:"conversation"`
		Messages []struct {
			Text string `json:"text"`
		} `json:"messages"`
		Questions []testQuestion `json:"questions"`
	}
	get := func(id int64) page {
		var p page
		l.api(t, http.MethodGet, fmt.Sprintf("/conversations/%d", id), nil, &p)
		return p
	}
	create := func(text string) int64 {
		t.Helper()
		var created struct {
			Conversation struct {
				ID int64 `json:"id"`
			} `json:"conversation"`
		}
		if code := l.api(t, http.MethodPost, "/conversations", map[string]any{"agent": "research", "text": text}, &created); code != http.StatusCreated {
			t.Fatalf("create = %d", code)
		}
		return created.Conversation.ID
	}
	pending := func(id int64, n int) testQuestion {
		t.Helper()
		var p page
		waitFor(t, fmt.Sprintf("question %d of conversation %d", n, id), func() bool {
			p = get(id)
			return len(p.Questions) == n && p.Questions[n-1].State == "pending" && p.Conversation.State == string(domain.StateWaiting)
		})
		return p.Questions[n-1]
	}
	answerAndResume := func(id int64, q testQuestion, values map[string]any, want string) {
		t.Helper()
		if code := l.api(t, http.MethodPost, fmt.Sprintf("/questions/%d/answer", q.ID), map[string]any{"values": values}, nil); code != http.StatusOK {
			t.Fatalf("answer = %d", code)
		}
		waitFor(t, "the resumed run to end", func() bool {
			p := get(id)
			return p.Conversation.State == string(domain.StateDone) && strings.Contains(p.Messages[len(p.Messages)-1].Text, want)
		})
	}

	start()
	first := create("deploy the site")
	q1 := pending(first, 1)
	slow := create("slow please")
	waitFor(t, "the slow reply to stream", func() bool {
		p := get(slow)
		return p.Conversation.State == string(domain.StateRunning)
	})

	// SIGTERM with a question waiting and a reply streaming: the process ends within the grace.
	terminate(t, l, logs)
	start()
	if p := get(first); len(p.Questions) != 1 || p.Questions[0].State != "pending" {
		t.Fatalf("after SIGTERM: %+v", p.Questions)
	}
	if p := get(slow); p.Conversation.State != string(domain.StateInterrupted) {
		t.Errorf("the streaming reply after SIGTERM: %s", p.Conversation.State)
	}
	answerAndResume(first, q1, map[string]any{"approved": true, "note": "after a SIGTERM"}, `{"approved":true,"note":"after a SIGTERM"}`)

	// kill -9 while the next interrupts wait: nothing is lost.
	second := create("form")
	q2 := pending(second, 1)
	l.cmd.Process.Kill()
	l.cmd.Wait()
	start()
	answerAndResume(second, q2, map[string]any{"quarter": "Q4", "year": 2026, "revenue": 12.5}, `{"quarter":"Q4","revenue":12.5,"year":2026}`)
}

// annWithToken adds the person ann to the database and returns her new access token.
func annWithToken(t *testing.T, db string) string {
	t.Helper()
	if _, err := runMain(nil, "pw-for-the-tests-1\n", "user", "add", "ann", "--password-stdin", "--db", db); err != nil {
		t.Fatal(err)
	}
	out, err := runMain(nil, "", "token", "add", "laptop", "--user", "ann", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// serveLive runs `parley serve` with args until the test ends, for the person whose access
// token is given; logs gets what it writes.
func serveLive(t *testing.T, token string, logs *syncBuffer, args ...string) *liveServer {
	t.Helper()
	cmd := serveCommand(args...)
	url, err := startServe(cmd, logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &liveServer{cmd: cmd, URL: url, Token: strings.TrimSpace(token)}
}

// terminate sends SIGTERM to the server and checks that it ends, cleanly, within the grace;
// it returns how long it took.
func terminate(t *testing.T, l *liveServer, logs *syncBuffer) time.Duration {
	t.Helper()
	stopped := time.Now()
	l.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- l.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("parley serve ended with %v after SIGTERM:\n%s", err, logs.String())
		}
	case <-time.After(2 * shutdownGrace):
		t.Fatalf("parley serve still runs %s after SIGTERM:\n%s", 2*shutdownGrace, logs.String())
	}
	took := time.Since(stopped)
	if took >= shutdownGrace {
		t.Errorf("SIGTERM took %s, more than the grace of %s", took, shutdownGrace)
	}
	return took
}
