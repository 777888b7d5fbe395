package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/mailtest"
	"github.com/parley-chat/parley/notify"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// loopback lets channels reach the test's receivers, on 127.0.0.1.
var loopback = notify.Networks{netip.MustParsePrefix("127.0.0.1/32")}

// hook is a webhook receiver that refuses the first fails posts with 500.
type hook struct {
	*httptest.Server
	mu     sync.Mutex
	fails  int
	tries  int
	bodies []notify.WebhookBody
}

func startHook(t *testing.T, fails int) *hook {
	h := &hook{fails: fails}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.tries++
		if h.tries <= h.fails {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		var b notify.WebhookBody
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&b) != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		h.bodies = append(h.bodies, b)
	}))
	t.Cleanup(h.Close)
	return h
}

// received waits for the n-th body the hook took.
func (h *hook) received(t *testing.T, n int) notify.WebhookBody {
	t.Helper()
	var b notify.WebhookBody
	webtest.WaitFor(t, fmt.Sprintf("webhook body %d", n), func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.bodies) < n {
			return false
		}
		b = h.bodies[n-1]
		return true
	})
	return b
}

func addChannel(t *testing.T, s *webtest.Server, ch domain.Channel) domain.Channel {
	t.Helper()
	ch, err := s.DB.AddChannel(context.Background(), ch, "test")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Unconfirmed() { // an email address: as if its owner followed the link mailed to it
		_, token, err := s.DB.ConfirmToken(context.Background(), ch.ID, ch.UserID, ch.GroupID)
		if err != nil {
			t.Fatal(err)
		}
		if ch, err = s.DB.ConfirmChannel(context.Background(), token); err != nil {
			t.Fatal(err)
		}
	}
	return ch
}

func userID(t *testing.T, s *webtest.Server, name string) int64 {
	u, _, err := s.DB.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// text is a mail's text/plain part.
func text(t *testing.T, m *mail.Message) string {
	t.Helper()
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	var plain, html string
	for {
		p, err := r.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p) // multipart decodes quoted-printable
		switch {
		case strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain"):
			plain = string(b)
		case strings.HasPrefix(p.Header.Get("Content-Type"), "text/html"):
			html = string(b)
		}
	}
	if plain == "" || !strings.Contains(html, "<a href=") {
		t.Fatalf("mail without both parts: %q / %q", plain, html)
	}
	return plain
}

func TestNotifications_WebhooksAndEmailHearOfQuestionsAndEscalations(t *testing.T) {
	box := mailtest.Start(t)
	s := webtest.Serve(t, nil, web.NewServerOptions{Notify: web.NotifyOptions{Backoff: 20 * time.Millisecond, Networks: loopback,
		SMTP: &notify.SMTP{Host: "127.0.0.1", Port: box.Port, From: "Parley <parley@example.com>", TLS: "none"}}})
	ann := s.Person(t, "ann", domain.RoleUser)
	s.Person(t, "bob", domain.RoleUser)
	s.Person(t, "cy", domain.RoleUser)
	group(t, s, "ops", []string{"bob", "cy"}, "ann")
	g, _ := s.DB.Group(context.Background(), "ops")

	annHook, opsHook := startHook(t, 2), startHook(t, 0)
	annWebhook := addChannel(t, s, domain.Channel{Kind: domain.ChannelWebhook, Target: annHook.URL + "/hooks/T0/B0/secret", UserID: userID(t, s, "ann")})
	addChannel(t, s, domain.Channel{Kind: domain.ChannelEmail, Target: "ann@example.com", UserID: userID(t, s, "ann")})
	addChannel(t, s, domain.Channel{Kind: domain.ChannelWebhook, Target: opsHook.URL, GroupID: g.ID})
	addChannel(t, s, domain.Channel{Kind: domain.ChannelEmail, Target: "cy@example.com", UserID: userID(t, s, "cy")})
	gone := startHook(t, 0)
	gone.Close() // a webhook nobody answers at: retried, and visible where it is set up
	addChannel(t, s, domain.Channel{Kind: domain.ChannelWebhook, Target: gone.URL, UserID: userID(t, s, "bob")})

	cs := connect(t, s, revisions[0], ann, "Claude Code", nil)
	field := []any{map[string]any{"name": "branch", "kind": "text"}}
	own, _, _ := call(t, cs, "ask_person", map[string]any{"message": "Which branch?\nThe CI is green.", "fields": field, "wait": "0s"})

	// Ann's webhook failed twice (500), then took it: Slack's text, and the question.
	b := annHook.received(t, 1)
	// Word of it links to the question's own page (which takes ann on to its card).
	page := fmt.Sprintf("%s/questions/%d", s.URL, int64(own["question_id"].(float64)))
	if !strings.Contains(b.Text, "Claude Code asks ann: Which branch?") || !strings.Contains(b.Text, page) ||
		b.Parley.Event != "question.asked" || b.Parley.Question.ID != int64(own["question_id"].(float64)) || b.Parley.URL != page {
		t.Fatalf("ann's webhook: %+v", b)
	}
	webtest.WaitFor(t, "the webhook's channel to show it delivered", func() bool {
		chs, _ := s.DB.Channels(context.Background(), userID(t, s, "ann"), 0)
		for _, ch := range chs {
			if ch.ID == annWebhook.ID {
				return !ch.LastOK.IsZero() && ch.LastError == ""
			}
		}
		return false
	})
	if annHook.tries != 3 {
		t.Fatalf("the webhook was tried %d times, want 3 (two 500s, then 200)", annHook.tries)
	}
	m := box.MailTo(t, "ann@example.com", 1)
	if subj := m.Header.Get("Subject"); !strings.Contains(subj, "Claude Code asks ann: Which branch?") {
		t.Fatalf("subject %q", subj)
	}
	if body := text(t, m); !strings.Contains(body, "The CI is green.") || !strings.Contains(body, page) {
		t.Fatalf("mail text %q", body)
	}

	// A question to ops: its webhook and cy's email hear of it (not ann's).
	grp, _, _ := call(t, cs, "ask_person", map[string]any{"message": "Restart the runners?", "to": "ops", "fields": field, "wait": "0s",
		"escalate_after": "1s", "escalate_to": "ops"})
	if b := opsHook.received(t, 1); !strings.Contains(b.Text, "asks the group ops: Restart the runners?") || !strings.HasSuffix(b.Parley.URL, fmt.Sprintf("/questions/%v", grp["question_id"])) {
		t.Fatalf("ops' webhook: %+v", b)
	}
	if m := box.MailTo(t, "cy@example.com", 1); !strings.Contains(m.Header.Get("Subject"), "Restart the runners?") {
		t.Fatalf("cy's mail: %v", m.Header)
	}
	// Bob's webhook is down: its failure shows where it is set up, with the next try.
	webtest.WaitFor(t, "bob's failed webhook", func() bool {
		chs, _ := s.DB.Channels(context.Background(), userID(t, s, "bob"), 0)
		return len(chs) == 1 && strings.Contains(chs[0].LastError, "could not be reached") && !strings.Contains(chs[0].LastError, gone.URL)
	})

	// Ann's own question, escalated to ops after a second, reaches them too.
	ownEsc, _, _ := call(t, cs, "ask_person", map[string]any{"message": "Merge the release branch?", "fields": field, "wait": "0s",
		"escalate_after": "1s", "escalate_to": "bob"})
	id := int64(ownEsc["question_id"].(float64))
	if ok, _ := s.DB.QuestionFor(context.Background(), id, userID(t, s, "bob")); ok {
		t.Fatal("the question is bob's before its escalation")
	}
	webtest.WaitFor(t, "the escalation to bob", func() bool {
		ok, _ := s.DB.QuestionFor(context.Background(), id, userID(t, s, "bob"))
		return ok
	})
	// The group's question escalated to the group: its webhook hears of it again.
	if b := opsHook.received(t, 2); b.Parley.Event != "question.escalated" || !strings.HasPrefix(b.Text, "Still waiting") {
		t.Fatalf("ops' escalation: %+v", b)
	}
	if _, text, isErr := call(t, cs, "ask_person", map[string]any{"message": "x", "fields": field, "escalate_after": "1s"}); !isErr || !strings.Contains(text, "go together") {
		t.Fatalf("escalate_after alone: %s", text)
	}
	if _, text, isErr := call(t, cs, "ask_person", map[string]any{"message": "x", "fields": field, "escalate_after": "1s", "escalate_to": "eve"}); !isErr || !strings.Contains(text, `may not escalate to "eve"`) {
		t.Fatalf("escalate to a stranger: %s", text)
	}
}

// A question answered before word of it got out is not announced: the retry finds it
// resolved, and drops it.
func TestNotifications_AQuestionAnsweredMeanwhileIsNotAnnounced(t *testing.T) {
	s := webtest.Serve(t, nil, web.NewServerOptions{Notify: web.NotifyOptions{Backoff: 50 * time.Millisecond, Networks: loopback}})
	ann := s.Person(t, "ann", domain.RoleUser)
	hook := startHook(t, 1_000_000) // down until it is told otherwise
	addChannel(t, s, domain.Channel{Kind: domain.ChannelWebhook, Target: hook.URL, UserID: userID(t, s, "ann")})
	cs := connect(t, s, revisions[1], ann, "Claude Code", nil)
	got, _, _ := call(t, cs, "ask_person", map[string]any{"message": "Tag the release?", "wait": "0s",
		"fields": []any{map[string]any{"name": "ok", "kind": "boolean"}}})
	webtest.WaitFor(t, "a first failed delivery", func() bool {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		return hook.tries > 0
	})
	if st, _ := s.API(t, ann, "POST", fmt.Sprintf("/questions/%v/answer", got["question_id"]), map[string]any{"values": map[string]any{"ok": true}}); st != 200 {
		t.Fatalf("answer: %d", st)
	}
	hook.mu.Lock()
	hook.fails = 0 // up again
	hook.mu.Unlock()
	webtest.WaitFor(t, "the outbox to empty", func() bool {
		next, err := s.DB.NextNotification(context.Background())
		return err == nil && next.IsZero()
	})
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if len(hook.bodies) != 0 {
		t.Fatalf("an answered question was announced: %+v", hook.bodies)
	}
}
