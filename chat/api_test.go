package chat

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

func TestChatClient_FollowBacksOffFromConnectionsThatCarryNothing(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		n := len(at)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK) // and closes at once, but the last time
		if n == 6 {
			fmt.Fprint(w, "event: conversation.deleted\nid: 4\ndata: {}\n\n")
		}
	}))
	defer srv.Close()
	c := &chatClient{base: srv.URL, token: "parley_secret", http: srv.Client(), retryWait: 5 * time.Millisecond}
	out := make(chan sseEvent, 10)
	done := make(chan struct{})
	go func() {
		c.follow(context.Background(), 7, "", out)
		close(done)
	}()
	for range collect(t, out, done) {
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 6 {
		t.Fatalf("%d connections, want 6", len(at))
	}
	// The waits double from 5 ms: the fifth is 160 ms; answered 200 alone resets nothing.
	if gap := at[5].Sub(at[4]); gap < 16*c.retryWait {
		t.Errorf("the fifth wait was %s, want at least %s (backing off)", gap, 16*c.retryWait)
	}
}

func TestChatClient_FollowReconnectsAStreamThatGoesQuiet(t *testing.T) {
	var mu sync.Mutex
	var cursors []string
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cursors = append(cursors, r.Header.Get("Last-Event-ID"))
		n := len(cursors)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 { // an event, a heartbeat, then nothing, as a stuck proxy does
			fmt.Fprint(w, "event: run.state\nid: 3\ndata: {}\n\n: heartbeat\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		fmt.Fprint(w, "event: conversation.deleted\nid: 4\ndata: {}\n\n")
	}))
	defer srv.Close()
	defer close(release)
	c := &chatClient{base: srv.URL, token: "parley_secret", http: srv.Client(), streamIdle: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan sseEvent, 10)
	done := make(chan struct{})
	go func() {
		c.follow(ctx, 7, "", out)
		close(done)
	}()
	var got []string
	for ev := range collect(t, out, done) {
		got = append(got, ev.Type+" "+ev.ID)
	}
	if want := "run.state 3,conversation.deleted 4"; strings.Join(got, ",") != want {
		t.Errorf("events %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, cur := range cursors[1:] {
		if cur != "3" {
			t.Errorf("reconnect %d: Last-Event-ID %q, want 3", i+1, cur)
		}
	}
}
