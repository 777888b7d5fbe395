package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/web"
)

// An open stream ends as soon as its person may no longer follow it, whoever made the change
// and in whichever process: not at the stream's next heartbeat (an hour here).
func TestStreamsEndWithTheirAccess(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		who  string // whose page follows ann's conversation
		end  func(t *testing.T, as *accountsServer, p *person)
	}{
		{"sign-out", "ann", func(t *testing.T, as *accountsServer, p *person) {
			p.do(http.MethodPost, "/logout", url.Values{}, nil)
		}},
		{"password reset by parley user", "ann", func(t *testing.T, as *accountsServer, p *person) {
			if _, err := as.db.SetPassword(ctx, "ann", "", "cli"); err != nil {
				t.Fatal(err)
			}
		}},
		{"demotion by parley user", "carol", func(t *testing.T, as *accountsServer, p *person) {
			if _, err := as.db.SetRole(ctx, "carol", domain.RoleUser, "cli"); err != nil {
				t.Fatal(err)
			}
		}},
		{"session expiry", "ann", func(t *testing.T, as *accountsServer, p *person) {
			as.clock.Add(31 * time.Minute) // the default idle limit is 30 minutes; nobody asks anything
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
			ann := as.signIn(t, "ann")
			_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"Plan"}}, nil)
			conv := h.Get("Location")
			as.waitState(t, convID(t, conv), domain.StateWaiting)
			p := ann
			if tt.who != "ann" {
				p = as.signIn(t, tt.who)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.URL+conv+"/stream", nil)
			resp, err := p.client.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("stream = %v, %v", resp, err)
			}
			defer resp.Body.Close()
			tt.end(t, as, p)
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatalf("the stream did not end: %v", err)
			}
		})
	}
}

// A token revoked by `parley token revoke` (only the database knows) ends its API streams.
func TestAPI_RevokedTokenEndsItsStreams(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.token(t, "ann")
	var started apiConv
	ann.json("POST", "/api/v1/conversations", map[string]string{"agent": "asker", "text": "Plan the offsite"}, 201, &started)
	r, stop := ann.events(started.Conversation.ID, "")
	defer stop()
	nextOf(t, r, "question.asked", "message.done", "run.state")
	u, _, _ := as.db.UserByName(context.Background(), "ann")
	if _, err := as.db.RevokeToken(context.Background(), u.ID, "laptop"); err != nil {
		t.Fatal(err)
	}
	for r.sc.Scan() {
	}
	if err := r.sc.Err(); err != nil {
		t.Fatalf("the stream did not end by itself: %v", err)
	}
}

// With an idle limit under a minute, a person who keeps using Parley stays signed in: the
// last-seen time is kept within a tenth of the limit.
func TestShortIdleLimitKeepsActiveSessions(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{Session: store.SessionLimits{Idle: 30 * time.Second, Max: time.Hour}}, web.Limits{})
	ann := as.signIn(t, "ann")
	for range 24 { // two minutes, a request every 5 s
		as.clock.Add(5 * time.Second)
		if code, _ := ann.get("/settings"); code != http.StatusOK {
			t.Fatalf("signed out while active: %d", code)
		}
	}
	as.clock.Add(31 * time.Second)
	if code, _ := ann.get("/settings"); code != http.StatusSeeOther {
		t.Fatalf("after 31 s idle = %d, want the sign-in page", code)
	}
}
