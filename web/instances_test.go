package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
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
