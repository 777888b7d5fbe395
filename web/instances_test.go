package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// Two instances on one PostgreSQL database count a person's messages together: the limit
// holds whichever instance the load balancer sends each message to.
func TestLimits_CountedAcrossInstances(t *testing.T) {
	url := storetest.Schema(t)
	limits := web.Limits{MessagesPerMinute: 3}
	var clients []*apiClient
	var token string
	for i := range 2 {
		db := storetest.Open(t, url)
		if i == 0 {
			u, err := db.CreateUser(context.Background(), "ann", "h", "")
			if err != nil {
				t.Fatal(err)
			}
			if token, _, err = db.CreateToken(context.Background(), u.ID, "laptop"); err != nil {
				t.Fatal(err)
			}
		}
		srv := startServer(t, db, web.NewServerOptions{DB: db, Runner: runnerFor(db, askerAndReader()), Limits: limits, Auth: web.AuthOptions{Signup: true}})
		clients = append(clients, &apiClient{t: t, base: newTestServerFrom(t, db, srv).URL, token: token})
	}
	for i := range 3 {
		clients[i%2].json("POST", "/api/v1/conversations", map[string]string{"agent": "asker", "text": fmt.Sprint("hi ", i)}, 201, nil)
	}
	for _, c := range clients {
		code, body, h := c.do("POST", "/api/v1/conversations", map[string]string{"agent": "asker", "text": "one more"})
		if code != 429 || h.Get("Retry-After") == "" || !strings.Contains(string(body), "too fast") {
			t.Errorf("a fourth message on %s = %d %s; want 429 (three a minute, counted by both instances)", c.base, code, body)
		}
	}
}

var _ web.SharedLimits = (*store.DB)(nil)

// A token revoked on one instance ends its streams on another before any event committed
// after the revocation reaches them.
func TestAccess_RevokedOnOneInstanceEndsStreamsOnAnother(t *testing.T) {
	url := storetest.Schema(t)
	a, b := storetest.Open(t, url), storetest.Open(t, url)
	u, err := a.CreateUser(context.Background(), "ann", "h", "")
	if err != nil {
		t.Fatal(err)
	}
	token, tok, err := a.CreateToken(context.Background(), u.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.CreateConversation(context.Background(), u.ID, "asker", "Plans", "")
	if err != nil {
		t.Fatal(err)
	}
	plan := func(title string) {
		t.Helper()
		if _, err := a.AppendEvent(context.Background(), domain.Event{ConversationID: c.ID, Kind: domain.EventPlan, Plan: &domain.Plan{Title: title}}); err != nil {
			t.Fatal(err)
		}
	}
	plan("before")
	srv := startServer(t, b, web.NewServerOptions{DB: b, Runner: runnerFor(b, askerAndReader()), Auth: web.AuthOptions{Signup: true}, Heartbeat: time.Hour})
	ts := newTestServerFrom(t, b, srv)
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/conversations/%d/events", ts.URL, c.ID), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream on B: %v %v", resp, err)
	}
	defer resp.Body.Close()
	var mu sync.Mutex
	var got strings.Builder
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			mu.Lock()
			got.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	webtest.WaitFor(t, "the stream on B to carry what came before", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(got.String(), "before")
	})
	if _, err := a.RevokeToken(context.Background(), u.ID, tok.Name); err != nil {
		t.Fatal(err)
	}
	plan("after the revocation")
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream on B goes on after the token was revoked on A")
	}
	if strings.Contains(got.String(), "after the revocation") {
		t.Errorf("the stream on B carried an event committed after the revocation:\n%s", got.String())
	}
}

// --max-streams holds across instances: a person's page open on one counts on the other,
// and once it closes the other lets one in.
func TestLimits_StreamsCountedAcrossInstances(t *testing.T) {
	url := storetest.Schema(t)
	dbs := []*store.DB{storetest.Open(t, url), storetest.Open(t, url)}
	ctx := context.Background()
	u, err := dbs[0].CreateUser(ctx, "ann", "h", "")
	if err != nil {
		t.Fatal(err)
	}
	session, err := dbs[0].CreateSession(ctx, u.ID, store.SessionLimits{Idle: time.Hour, Max: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, err := dbs[0].CreateConversation(ctx, u.ID, "asker", "Plans", "")
	if err != nil {
		t.Fatal(err)
	}
	var bases []string
	for _, db := range dbs {
		srv := startServer(t, db, web.NewServerOptions{DB: db, Runner: runnerFor(db, askerAndReader()), Limits: web.Limits{Streams: 1}, Heartbeat: time.Hour})
		bases = append(bases, newTestServerFrom(t, db, srv).URL)
	}
	open := func(base string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/c/%d/stream", base, c.ID), nil)
		req.AddCookie(&http.Cookie{Name: "parley_session", Value: session})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := open(bases[0])
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first page's stream on A = %d", first.StatusCode)
	}
	second := open(bases[1])
	if second.StatusCode == http.StatusOK {
		second.Body.Close()
		t.Fatal("a second page's stream on B = 200; want 429, the one on A counting")
	}
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "You have 1 Parley pages open") {
		t.Fatalf("a second page's stream on B = %d %s; want 429, the one on A counting", second.StatusCode, body)
	}
	first.Body.Close()
	webtest.WaitFor(t, "B to let a page in once A's closed", func() bool {
		r := open(bases[1])
		defer r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
}
