package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
)

// gatedModel is a chat-completions endpoint whose replies write their first words, then
// wait until open is closed (or Parley gives the request up) before writing the rest.
type gatedModel struct {
	open chan struct{}
	once sync.Once
}

const gatedReply = "Instance reply begins here and ends once the gate opens."

func (m *gatedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	send := streamChunks(w)
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	for i, word := range strings.SplitAfter(gatedReply, " ") {
		send(map[string]any{"content": word}, nil)
		if i == 3 {
			select {
			case <-m.open:
			case <-r.Context().Done():
				return
			}
		}
	}
	send(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// TestServe_SeveralInstancesOnePostgres runs two real `parley serve` processes on one
// PostgreSQL database: a reply an agent writes on A streams live to a client of B; a
// question asked on A is answered on B; A killed with -9 mid-reply is taken over by B within
// its lease (the cut text kept, marked interrupted), and Retry on B finishes the run; both
// restart with nothing lost or written twice.
func TestServe_SeveralInstancesOnePostgres(t *testing.T) {
	db, token, model, modelURL := gatedSetup(t)
	start := func(name string) *liveServer {
		t.Helper()
		return startInstance(t, name, db, token, modelURL, "--lease", "2s").liveServer
	}
	a, b := start("A"), start("B")

	type message struct {
		Role        string `json:"role"`
		Text        string `json:"text"`
		Interrupted bool   `json:"interrupted"`
	}
	type conversation struct {
		Conversation struct {
			ID    int64  `json:"id"`
			State string `json:"state"`
		} `json:"conversation"`
		Messages  []message      `json:"messages"`
		Questions []testQuestion `json:"questions"`
	}
	get := func(l *liveServer, id int64) conversation {
		t.Helper()
		var c conversation
		if code := l.api(t, http.MethodGet, fmt.Sprintf("/conversations/%d", id), nil, &c); code != http.StatusOK {
			t.Fatalf("GET conversation %d = %d", id, code)
		}
		return c
	}
	create := func(l *liveServer, agentName, text string) int64 {
		t.Helper()
		var c api.ConversationCreated
		if code := l.api(t, http.MethodPost, "/conversations", api.NewConversation{Agent: agentName, Text: text}, &c); code != http.StatusCreated {
			t.Fatalf("create = %d", code)
		}
		return c.Conversation.ID
	}

	// A question asked on A is answered on B, and the run goes on.
	pr := create(a, "platform-engineer", "Open a pull request for the login fix")
	waitFor(t, "the question asked on A", func() bool { return len(get(b, pr).Questions) == 1 })
	q := get(b, pr).Questions[0]
	values := map[string]any{"branch_name": "fix/login", "pr_title": "Fix the login", "base_branch": "main"}
	if code := b.api(t, http.MethodPost, fmt.Sprintf("/questions/%d/answer", q.ID), map[string]any{"values": values}, nil); code != http.StatusOK {
		t.Fatalf("answer on B = %d", code)
	}
	waitFor(t, "the run to go on after the answer on B", func() bool {
		c := get(a, pr)
		return c.Conversation.State != string(domain.StateRunning) && len(c.Messages) > 1 && c.Questions[0].Resolution != nil
	})
	if r := get(a, pr).Questions[0].Resolution; r.Outcome != string(domain.Answered) || r.Values["branch_name"] != "fix/login" {
		t.Fatalf("A reads the answer given on B as %+v", r)
	}

	// A reply written on A streams live to a client of B, who opens the conversation once
	// A has stored its first words and its model has paused: B shows them at once, not
	// when the next words come.
	id := create(a, "fake", "Tell me something")
	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	waitFor(t, "A to store the first words of its reply", func() bool {
		var n int
		raw.QueryRow(`SELECT count(*) FROM draft_batches WHERE drafts LIKE '%here %'`).Scan(&n)
		return n > 0
	})
	live := followText(t, b, id)
	waitFor(t, "B's stream to carry the words A's agent wrote", func() bool { return strings.Contains(live(), "Instance reply begins here") })

	// A dies mid-reply: B takes the run over, keeps the cut text, and Retry there finishes it.
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Wait()
	waitFor(t, "B to take over the run A left", func() bool { return get(b, id).Conversation.State == string(domain.StateInterrupted) })
	c := get(b, id)
	if n := len(c.Messages); n != 2 || !c.Messages[1].Interrupted || !strings.HasPrefix(c.Messages[1].Text, "Instance reply begins here") {
		t.Fatalf("after the takeover: %+v; want the cut reply, marked interrupted", c.Messages)
	}
	model.once.Do(func() { close(model.open) })
	if code := b.api(t, http.MethodPost, fmt.Sprintf("/conversations/%d/retry", id), map[string]any{}, nil); code != http.StatusNoContent {
		t.Fatalf("retry on B = %d", code)
	}
	waitFor(t, "the run to finish on B", func() bool { return get(b, id).Conversation.State == string(domain.StateDone) })

	// Both restart: nothing is lost or written twice.
	before := map[int64]conversation{pr: get(b, pr), id: get(b, id)}
	b.cmd.Process.Signal(syscall.SIGTERM)
	if err := b.cmd.Wait(); err != nil {
		t.Fatalf("B after SIGTERM: %v", err)
	}
	a, b = start("A again"), start("B again")
	for _, l := range []*liveServer{a, b} {
		for cid, want := range before {
			got := get(l, cid)
			if fmt.Sprint(got.Messages) != fmt.Sprint(want.Messages) || got.Conversation.State != want.Conversation.State {
				t.Errorf("conversation %d after the restart: %s %+v; want %s %+v", cid, got.Conversation.State, got.Messages, want.Conversation.State, want.Messages)
			}
		}
	}
	last := get(a, id).Messages
	if n := len(last); n < 3 || last[n-1].Text != gatedReply || last[n-1].Interrupted {
		t.Errorf("the retried reply: %+v; want it whole", last)
	}
}

// followText follows a conversation's API event stream on l and returns the text of the
// message being written so far, as its message.delta events bring it.
func followText(t *testing.T, l *liveServer, id int64) func() string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/conversations/%d/events", l.URL, id), nil)
	req.Header.Set("Authorization", "Bearer "+l.Token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream = %d", resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	var mu sync.Mutex
	var text strings.Builder
	go func() {
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:") && event == "message.delta":
				var d api.Delta
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data:")), &d) == nil {
					mu.Lock()
					if d.Offset == text.Len() {
						text.WriteString(d.Text)
					}
					mu.Unlock()
				}
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return text.String()
	}
}
