package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// TestServe_InstancesKilledInTurn runs three instances on one PostgreSQL database while
// people answer the questions of a dozen conversations through all three, and kills each
// instance with -9 in turn (starting it again after): every answer given is stored once and
// resumes its run once; every run ends, taken over by another instance or marked cut off,
// and Retry finishes those.
func TestServe_InstancesKilledInTurn(t *testing.T) {
	db := storetest.Schema(t)
	token := strings.TrimSpace(annWithToken(t, db))
	flags := []string{"--lease", "2s", "--builtin-pace", "3ms"}
	var mu sync.Mutex
	live := make([]*instance, 3)
	for i := range live {
		live[i] = startInstance(t, fmt.Sprint("instance ", i), db, token, "http://127.0.0.1:1", flags...)
	}
	at := func(i int) *instance {
		mu.Lock()
		defer mu.Unlock()
		return live[i%3]
	}

	const n = 12
	ids := make([]int64, n)
	for i := range ids {
		var c struct {
			Conversation struct{ ID int64 } `json:"conversation"`
		}
		if code := at(i).api(t, http.MethodPost, "/conversations", map[string]any{"agent": "platform-engineer", "text": fmt.Sprintf("Open a pull request for fix %d", i)}, &c); code != http.StatusCreated {
			t.Fatalf("create = %d", code)
		}
		ids[i] = c.Conversation.ID
	}
	type conversation struct {
		Conversation struct {
			State string `json:"state"`
		} `json:"conversation"`
		Questions []testQuestion `json:"questions"`
	}
	get := func(i int, id int64) (c conversation, ok bool) {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/conversations/%d", at(i).URL, id), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return c, false
		}
		defer resp.Body.Close()
		return c, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&c) == nil
	}
	questions := make([]int64, n)
	for i, id := range ids {
		waitFor(t, "the question of each conversation", func() bool {
			c, ok := get(i, id)
			if ok && len(c.Questions) > 0 {
				questions[i] = c.Questions[0].ID
			}
			return questions[i] != 0
		})
	}

	// People answer, each through the instance of their own and, when it is down, the next.
	answer := func(i int) (int, error) {
		values := map[string]any{"branch_name": fmt.Sprintf("fix/%d", i), "pr_title": fmt.Sprint("Fix ", i), "base_branch": "main"}
		body, _ := json.Marshal(map[string]any{"values": values})
		var last error
		for try := range 30 {
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/questions/%d/answer", at(i+try).URL, questions[i]), bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				last = err
				continue
			}
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				last = fmt.Errorf("answer = %d", resp.StatusCode)
				continue
			}
			return resp.StatusCode, nil
		}
		return 0, last
	}
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := answer(i)
			if err != nil {
				t.Errorf("answer %d: %v", i, err)
			}
			codes[i] = code
		}()
	}
	// Meanwhile each instance is killed in turn, and started again.
	for k := range 3 {
		victim := at(k)
		victim.cmd.Process.Signal(syscall.SIGKILL)
		victim.cmd.Wait()
		again := startInstance(t, fmt.Sprint("instance ", k, " again"), db, token, "http://127.0.0.1:1", flags...)
		mu.Lock()
		live[k] = again
		mu.Unlock()
	}
	wg.Wait()
	for i, code := range codes {
		// A retried answer whose first try was stored meanwhile is told so (409): it is
		// stored once either way.
		if code != http.StatusOK && code != http.StatusConflict {
			t.Errorf("answer %d = %d", i, code)
		}
	}

	// Every run ends: done, or cut off and finished by Retry.
	cut := 0
	defer func() { t.Logf("%d of %d runs were cut off by the kills and retried", cut, n) }()
	for i, id := range ids {
		waitFor(t, "each run to end", func() bool {
			c, ok := get(i, id)
			return ok && c.Conversation.State != string(domain.StateRunning)
		})
		c, _ := get(i, id)
		if s := domain.RunState(c.Conversation.State); s == domain.StateInterrupted || s == domain.StateFailed {
			cut++
			if code := at(i).api(t, http.MethodPost, fmt.Sprintf("/conversations/%d/retry", id), map[string]any{}, nil); code != http.StatusNoContent {
				t.Fatalf("retry %d = %d", id, code)
			}
			waitFor(t, "the retried run to end", func() bool {
				c, ok := get(i, id)
				return ok && c.Conversation.State != string(domain.StateRunning)
			})
		}
		c, _ = get(i, id)
		if c.Conversation.State != string(domain.StateDone) {
			t.Errorf("conversation %d ended %s; want done", id, c.Conversation.State)
		}
	}

	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for i, q := range questions {
		var answers, resolved, resumes int
		var vals string
		if err := raw.QueryRow(`SELECT count(*), coalesce(max(vals), '') FROM answers WHERE question_id = $1`, q).Scan(&answers, &vals); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRow(`SELECT count(*) FROM events WHERE kind = 'question_resolved' AND (payload::json#>>'{resolution,question_id}')::bigint = $1`, q).Scan(&resolved); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRow(`SELECT count(*) FROM steps s JOIN questions q ON q.run_id = s.run_id WHERE q.id = $1 AND s.trigger = 'resume'`, q).Scan(&resumes); err != nil {
			t.Fatal(err)
		}
		if answers != 1 || resolved != 1 || !strings.Contains(vals, fmt.Sprintf(`"fix/%d"`, i)) {
			t.Errorf("question %d: %d answers (%s), %d resolutions logged; want its one answer, once", q, answers, vals, resolved)
		}
		if resumes != 1 {
			t.Errorf("question %d: its run resumed %d times; want once", q, resumes)
		}
	}
}
