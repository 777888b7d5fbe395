package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parley-chat/parley/config"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

// mcpCall calls ask_person on a live Parley as the token's person, over rev, and returns
// the structured result.
func mcpCall(t *testing.T, url, token, rev string, args map[string]any) map[string]any {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Title: "Claude Code", Version: "2.1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: config.BearerTransport{Token: token}}}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		t.Fatalf("connect over %s: %v", rev, err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_person", Arguments: args})
	if err != nil {
		t.Fatalf("ask_person over %s: %v", rev, err)
	}
	if res.IsError {
		t.Fatalf("ask_person over %s: %s", rev, res.Content[0].(*mcp.TextContent).Text)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out
}

// An agent asks over MCP, Parley stops (SIGTERM: the waiting calls end pending, within the
// grace) and is killed (-9): asking again with the same request_id finds the same question,
// never a second one, and once the person answered, the answer.
func TestServe_MCPQuestionsOutliveSIGTERMAndKill9(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	token := annWithToken(t, db)
	var l *liveServer
	var logs *syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last server's log:\n%s", logs.String())
		}
	})
	start := func() {
		logs = &syncBuffer{}
		l = serveLive(t, token, logs, "--db", db)
	}
	ask := func(rev, id, wait string) map[string]any {
		return mcpCall(t, l.URL, l.Token, rev, map[string]any{"message": "Which region for " + id + "?", "request_id": id, "wait": wait,
			"fields": []any{map[string]any{"name": "region", "kind": "select", "required": true, "options": []any{"eu-west", "us-east"}}}})
	}
	start()
	// Two calls wait, one per revision, when Parley is told to stop.
	waiting := make(chan map[string]any, 2)
	for _, c := range []struct{ rev, id string }{{"2026-07-28", "region-a"}, {"2025-11-25", "region-b"}} {
		go func() { waiting <- ask(c.rev, c.id, "10m") }()
	}
	waitFor(t, "both questions", func() bool {
		var qs struct {
			Questions []testQuestion `json:"questions"`
		}
		l.api(t, http.MethodGet, "/questions", nil, &qs)
		return len(qs.Questions) == 2
	})
	terminate(t, l, logs)
	ids := map[string]bool{}
	for range 2 {
		got := <-waiting
		if got["outcome"] != "pending" {
			t.Fatalf("a waiting call at SIGTERM: %v", got)
		}
		ids[fmt.Sprint(got["question_id"])] = true
	}
	start()
	a := ask("2026-07-28", "region-a", "0s")
	if a["outcome"] != "pending" || !ids[fmt.Sprint(a["question_id"])] {
		t.Fatalf("after the restart: %v (asked %v)", a, ids)
	}
	// kill -9, then the person answers; the next call with the id has the answer.
	l.cmd.Process.Kill()
	l.cmd.Wait()
	start()
	qid := a["question_id"].(float64)
	if code := l.api(t, http.MethodPost, fmt.Sprintf("/questions/%d/answer", int64(qid)), map[string]any{"values": map[string]any{"region": "eu-west"}}, nil); code != http.StatusOK {
		t.Fatalf("answer = %d", code)
	}
	got := ask("2025-11-25", "region-a", "1m")
	if got["outcome"] != "answered" || got["question_id"] != qid || got["values"].(map[string]any)["region"] != "eu-west" || got["by"] != "ann" {
		t.Fatalf("after kill -9 and the answer: %v", got)
	}
	var qs struct {
		Questions []testQuestion `json:"questions"`
	}
	l.api(t, http.MethodGet, "/questions", nil, &qs)
	if len(qs.Questions) != 1 {
		t.Fatalf("%d questions pending, want region-b's alone", len(qs.Questions))
	}
}

// Word of a question is in the outbox with the question: a webhook that hangs while Parley
// is told to stop (SIGTERM) or killed (-9) gets it after the restart, once.
func TestServe_MCPNotificationsOutliveSIGTERMAndKill9(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	token := annWithToken(t, db)
	hook := holdRequests(t, func(_ *http.Request, body []byte) (int, string) { return http.StatusOK, string(body) })
	ctx := context.Background()
	side, err := store.OpenWith(ctx, db, store.Options{Holder: "test", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	u, _, _ := side.UserByName(ctx, "ann")
	if _, err := side.AddChannel(ctx, domain.Channel{Kind: domain.ChannelWebhook, Target: hook.URL, UserID: u.ID}, "ann"); err != nil {
		t.Fatal(err)
	}
	side.Close()

	srv := newRestartable(t, token, "--db", db, "--channel-networks", "127.0.0.1/32")
	ask := func(id string) {
		mcpCall(t, srv.L.URL, srv.L.Token, "2026-07-28", map[string]any{"message": "Ship " + id + "?", "request_id": id, "wait": "0s",
			"fields": []any{map[string]any{"name": "ok", "kind": "boolean"}}})
	}
	t0 := time.Now()
	step := func(what string) { t.Logf("%s at %s", what, time.Since(t0).Round(time.Millisecond)) }
	srv.Start()
	ask("first")
	<-hook.Held // its delivery is under way when Parley is told to stop
	step("first hangs")
	terminate(t, srv.L, srv.Logs)
	step("terminated")
	srv.Start()
	<-hook.Held // tried again after the restart, and hangs again: kill -9 now
	step("first hangs again")
	ask("second")
	<-hook.Held
	step("second hangs")
	srv.Kill()
	waitFor(t, "the killed sender's requests to end", func() bool { return hook.InFlight() == 0 })
	step("killed")
	hook.Release()
	srv.Start()
	waitFor(t, "both notifications", func() bool {
		if n := len(hook.Taken()); n > 2 {
			t.Fatalf("%d notifications, want 2: %s", n, strings.Join(hook.Taken(), "\n"))
		}
		return len(hook.Taken()) == 2
	})
	joined := strings.Join(hook.Taken(), "\n")
	if !strings.Contains(joined, "Ship first?") || !strings.Contains(joined, "Ship second?") || !strings.Contains(joined, srv.L.URL+"/questions/") {
		t.Fatalf("the webhook got %s", joined)
	}
}
