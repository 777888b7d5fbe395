package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestChatClient_FollowReconnectsWithLastEventID(t *testing.T) {
	var mu sync.Mutex
	var cursors []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer parley_secret" || strings.Contains(r.URL.String(), "parley_secret") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		cursors = append(cursors, r.URL.Query().Get("after")+"|"+r.Header.Get("Last-Event-ID"))
		n := len(cursors)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		switch n {
		case 1: // a message half written, then the connection drops
			fmt.Fprint(w, ": heartbeat\n\nevent: run.state\nid: 3\ndata: {\"state\":\"running\"}\n\n")
			fmt.Fprint(w, "event: message.delta\nid: 3/3-1/6\ndata: {\"text\":\"Hello \"}\n\n")
		default:
			fmt.Fprint(w, "event: message.delta\nid: 3/3-1/11\ndata: {\"offset\":6,\"text\":\"world\"}\n\n")
			fmt.Fprint(w, "event: conversation.deleted\nid: 4\ndata: {}\n\n")
		}
	}))
	defer srv.Close()
	c := &chatClient{base: srv.URL, token: "parley_secret", http: srv.Client()}
	out := make(chan sseEvent, 10)
	done := make(chan struct{})
	go func() {
		c.follow(context.Background(), 7, "2", out)
		close(done)
	}()
	var got []string
	for ev := range collect(t, out, done) {
		got = append(got, ev.Type+" "+ev.ID+" "+string(ev.Data))
	}
	want := []string{`run.state 3 {"state":"running"}`, `message.delta 3/3-1/6 {"text":"Hello "}`,
		`message.delta 3/3-1/11 {"offset":6,"text":"world"}`, `conversation.deleted 4 {}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cursors) != 2 || cursors[0] != "2|" || cursors[1] != "|3/3-1/6" {
		t.Errorf("cursors (after|Last-Event-ID) = %q, want ?after=2 first, then the last id as Last-Event-ID", cursors)
	}

	// A token the server refuses ends the stream with an error that says so.
	c.token = "parley_revoked"
	out = make(chan sseEvent, 1)
	c.follow(context.Background(), 7, "", out)
	if ev := <-out; ev.Err == nil || !strings.Contains(ev.Err.Error(), "not valid (revoked?)") {
		t.Errorf("a refused token: %v, want an error saying the token is not valid", ev.Err)
	}
}

// collect yields the events sent on out until follow returns.
func collect(t *testing.T, out <-chan sseEvent, done <-chan struct{}) <-chan sseEvent {
	t.Helper()
	all := make(chan sseEvent, 10)
	go func() {
		defer close(all)
		for {
			select {
			case ev := <-out:
				all <- ev
			case <-done:
				for {
					select {
					case ev := <-out:
						all <- ev
					default:
						return
					}
				}
			case <-time.After(waitLong):
				return
			}
		}
	}()
	return all
}
