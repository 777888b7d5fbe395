package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

// versionsModel is a chat-completions endpoint whose first reply comes whole and whose later
// ones (the regenerated replies) write their first words, then wait until Parley gives the
// request up: a reply that streams when Parley is killed or told to stop. Once finish is
// closed, every reply comes whole.
type versionsModel struct {
	mu     sync.Mutex
	calls  int
	finish chan struct{}
}

// reply is the text of the model's n-th reply (1 is the first); the words of a reply that
// waits are its first three.
func (m *versionsModel) reply(n int) string {
	if n == 1 {
		return "The first answer, whole and complete."
	}
	return fmt.Sprintf("Answer%d begins here and then goes on for a while.", n)
}

func (m *versionsModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.calls++
	n := m.calls
	m.mu.Unlock()
	send := streamChunks(w)
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	words := strings.SplitAfter(m.reply(n), " ")
	for i, word := range words {
		send(map[string]any{"content": word}, nil)
		if n > 1 && i == 2 {
			select {
			case <-m.finish:
			case <-r.Context().Done():
				return
			}
		}
	}
	send(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// TestServe_VersionsOutliveKill9AndSIGTERM regenerates a reply over the API and kills the
// process (-9) while the new reply streams: after the restart both versions are there, the
// first whole, and the conversation shows the second, its reply cut off (interrupted) with
// the text already stored. SIGTERM while the next regenerated reply streams ends the process
// within the grace, with the same outcome; the conversation then goes on as before.
func TestServe_VersionsOutliveKill9AndSIGTERM(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	token := annWithToken(t, db)
	model := &versionsModel{finish: make(chan struct{})}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close) // after the server's own cleanup: it has no request left then
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
		cmd := serveCommand("--db", db)
		cmd.Env = append(cmd.Env, "PARLEY_OPENAI_BASE_URL="+srv.URL+"/v1", "PARLEY_OPENAI_MODEL=fake")
		url, err := startServe(cmd, logs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		l = &liveServer{cmd: cmd, URL: url, Token: strings.TrimSpace(token)}
	}

	type message struct {
		Role        string `json:"role"`
		Text        string `json:"text"`
		Interrupted bool   `json:"interrupted"`
	}
	type state struct {
		Conversation struct {
			ID      int64  `json:"id"`
			State   string `json:"state"`
			Version int64  `json:"version"`
		} `json:"conversation"`
		Messages []message `json:"messages"`
		Version  int64     `json:"version"`
	}
	type versions struct {
		Current  int64 `json:"current"`
		Versions []struct {
			Version int64  `json:"version"`
			Reason  string `json:"reason"`
		} `json:"versions"`
	}
	get := func(id int64, version int) state {
		t.Helper()
		path := fmt.Sprintf("/conversations/%d", id)
		if version >= 0 {
			path += fmt.Sprintf("?version=%d", version)
		}
		var s state
		if code := l.api(t, http.MethodGet, path, nil, &s); code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, code)
		}
		return s
	}
	listVersions := func(id int64) versions {
		t.Helper()
		var vs versions
		if code := l.api(t, http.MethodGet, fmt.Sprintf("/conversations/%d/versions", id), nil, &vs); code != http.StatusOK {
			t.Fatalf("GET versions = %d", code)
		}
		return vs
	}
	regenerate := func(id int64, want int64) {
		t.Helper()
		var out struct {
			Version int64 `json:"version"`
		}
		if code := l.api(t, http.MethodPost, fmt.Sprintf("/conversations/%d/regenerate", id), map[string]any{}, &out); code != http.StatusAccepted || out.Version != want {
			t.Fatalf("regenerate = %d, version %d; want 202, version %d", code, out.Version, want)
		}
	}
	// streaming waits until the reply being written has its first words stored (in the
	// group commit's draft batches, read beside the server): what a crash must not lose.
	streaming := func(id int64, words string) {
		t.Helper()
		side, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer side.Close()
		waitFor(t, fmt.Sprintf("%q stored as the reply streams", words), func() bool {
			return strings.Contains(draftText(t, side), words)
		})
		if s := get(id, -1); s.Conversation.State != string(domain.StateRunning) {
			t.Fatalf("the reply streams, but the conversation is %s", s.Conversation.State)
		}
	}
	// cutOff checks the conversation after a restart: n versions, version shown the last,
	// its reply interrupted with the words stored; the earlier versions as they were.
	first := []message{{Role: "user", Text: "Tell me something"}, {Role: "agent", Text: model.reply(1)}}
	cutOff := func(id int64, n int, words string) {
		t.Helper()
		vs := listVersions(id)
		if len(vs.Versions) != n || vs.Current != int64(n-1) {
			t.Fatalf("after the restart: %d versions, showing %d; want %d, showing %d: %+v", len(vs.Versions), vs.Current, n, n-1, vs)
		}
		for _, v := range vs.Versions[1:] {
			if v.Reason != string(domain.VersionRegenerate) {
				t.Errorf("version %d: reason %q", v.Version, v.Reason)
			}
		}
		s := get(id, -1)
		t.Logf("after the restart: %d versions; version %d is %s: %+v", len(vs.Versions), s.Version, s.Conversation.State, s.Messages)
		if s.Conversation.Version != int64(n-1) || s.Version != int64(n-1) {
			t.Errorf("the conversation shows version %d (read %d), want %d", s.Conversation.Version, s.Version, n-1)
		}
		if s.Conversation.State != string(domain.StateInterrupted) {
			t.Errorf("the conversation is %s, want %s", s.Conversation.State, domain.StateInterrupted)
		}
		if len(s.Messages) != 2 || s.Messages[0] != first[0] || !s.Messages[1].Interrupted ||
			!strings.HasPrefix(s.Messages[1].Text, words) || !strings.HasPrefix(model.reply(n), s.Messages[1].Text) {
			t.Errorf("version %d after the restart: %+v; want the question and the cut-off reply from %q", n-1, s.Messages, words)
		}
		if got := get(id, 0).Messages; len(got) != 2 || got[0] != first[0] || got[1] != first[1] {
			t.Errorf("version 0 after the restart: %+v, want %+v", got, first)
		}
	}

	start()
	var created struct {
		Conversation struct {
			ID int64 `json:"id"`
		} `json:"conversation"`
	}
	if code := l.api(t, http.MethodPost, "/conversations", map[string]any{"agent": "fake", "text": "Tell me something"}, &created); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	id := created.Conversation.ID
	waitFor(t, "the first reply", func() bool { return get(id, -1).Conversation.State == string(domain.StateDone) })

	// kill -9 while the regenerated reply streams.
	regenerate(id, 1)
	streaming(id, "Answer2 begins here")
	l.cmd.Process.Kill()
	l.cmd.Wait()
	start()
	cutOff(id, 2, "Answer2 begins here")

	// SIGTERM while the next regenerated reply streams: within the grace, and nothing lost.
	regenerate(id, 2)
	streaming(id, "Answer3 begins here")
	took := terminate(t, l, logs)
	t.Logf("SIGTERM while the reply streamed: stopped in %s", took.Round(time.Millisecond))
	start()
	cutOff(id, 3, "Answer3 begins here")
	if got := get(id, 1).Messages; len(got) != 2 || !got[1].Interrupted || !strings.HasPrefix(got[1].Text, "Answer2 begins") {
		t.Errorf("version 1 after the second restart: %+v", got)
	}

	// The conversation goes on: another reply, whole this time.
	close(model.finish)
	regenerate(id, 3)
	waitFor(t, "the last reply", func() bool { return get(id, -1).Conversation.State == string(domain.StateDone) })
	if got := get(id, -1).Messages; len(got) != 2 || got[1].Text != model.reply(4) || got[1].Interrupted {
		t.Errorf("the last version: %+v", got)
	}
	if vs := listVersions(id); len(vs.Versions) != 4 || vs.Current != 3 {
		t.Errorf("at the end: %+v", vs)
	}
}

// draftText is the text of the messages being written that the database holds, batch after
// batch, as a crash would leave it.
func draftText(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT drafts FROM draft_batches ORDER BY id`)
	if err != nil {
		return "" // not readable yet: the next poll reads it
	}
	defer rows.Close()
	var text strings.Builder
	for rows.Next() {
		var raw string
		var drafts []struct {
			Text string `json:"t"`
		}
		if rows.Scan(&raw) != nil || json.Unmarshal([]byte(raw), &drafts) != nil {
			return ""
		}
		for _, d := range drafts {
			text.WriteString(d.Text)
		}
	}
	return text.String()
}
