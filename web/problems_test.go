package web_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/web"
)

func TestHomePageListsProblemsAsTheyStandNow(t *testing.T) {
	db := newDB(t)
	var mu sync.Mutex
	live := []string{`agent "ops": tool server "tickets" (https://tickets.example.com/mcp): the server stopped: EOF`}
	srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runnerFor(db), Heartbeat: time.Hour,
		Problems: []string{`agent "gpt": api_key_env: the environment variable KEY is empty or not set`},
		LiveProblems: func() []string {
			mu.Lock()
			defer mu.Unlock()
			return live
		}})
	ts := newTestServerFrom(t, db, srv)
	_, page := ts.get(t, "/")
	for _, want := range []string{"api_key_env", "tickets.example.com/mcp", "the server stopped: EOF"} {
		if !strings.Contains(page, want) {
			t.Errorf("home page lacks %q", want)
		}
	}
	mu.Lock()
	live = nil // the server came back
	mu.Unlock()
	if _, page = ts.get(t, "/"); strings.Contains(page, "the server stopped") || !strings.Contains(page, "api_key_env") {
		t.Error("the home page still shows a problem that is gone, or lost the one that stays")
	}
}
