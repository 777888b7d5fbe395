package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// A decline reason has a limit, like an answer: the form says so and keeps the question
// pending (the browser's textarea carries the limit too); a reason with NUL is refused the
// same way; a short reason declines.
func TestDecline_ReasonLimits(t *testing.T) {
	ts := newTestServer(t, newDB(t), askerAgent(askerQuestion))
	path := ts.start(t, "asker", "hello")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	if _, page := ts.get(t, path); !strings.Contains(page, `name="_reason" rows="2" maxlength="2000"`) {
		t.Error("the reason's textarea carries no maxlength of 2000")
	}
	for _, tt := range []struct{ reason, want string }{
		{strings.Repeat("x", 3_000_000), "The reason must be at most 2000 characters (this has 3,000,000)."},
		{"not\x00now", "The reason contains a control character (U+0000) at character 4: remove it."},
	} {
		code, body, _ := ts.post(t, "/questions/1/decline", url.Values{"_reason": {tt.reason}})
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, tt.want) {
			t.Errorf("decline = %d %.300s, want 422 and %q", code, body, tt.want)
		}
		if rec, _ := ts.db.Question(context.Background(), 1); !rec.Pending() {
			t.Fatalf("a refused reason declined the question: %+v", rec.Resolution)
		}
	}
	code, body, _ := ts.post(t, "/questions/1/decline", url.Values{"_reason": {"not\r\nnow"}})
	if rec, _ := ts.db.Question(context.Background(), 1); code != http.StatusOK || rec.Resolution == nil || rec.Resolution.Reason != "not\nnow" {
		t.Fatalf("decline = %d %.300s; resolution %+v", code, body, rec.Resolution)
	}
}

// A message with a NUL or an escape is refused with where it is, in the composer and in
// the API alike, and nothing is stored.
func TestSendMessage_ControlCharactersRefused(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	api := as.token(t, "ann")
	var started apiConv
	api.json("POST", "/api/v1/conversations", map[string]string{"agent": "asker", "text": "plan it"}, 201, &started)
	id := started.Conversation.ID
	as.waitState(t, id, domain.StateWaiting)
	path := "/c/" + itoa(id)

	code, body, _ := ann.do(http.MethodPost, path+"/messages", url.Values{"text": {"see\x00this"}}, nil)
	if want := "The message contains a control character (U+0000) at character 4: remove it."; code != http.StatusOK || !strings.Contains(body, want) || !strings.Contains(body, "composer-error") {
		t.Errorf("composer = %d %.300s, want %q", code, body, want)
	}
	var e apiErr
	api.json("POST", "/api/v1/conversations/"+itoa(id)+"/messages", map[string]string{"text": "\x1b[31mred"}, 422, &e)
	if want := "The message contains a control character (U+001B) at character 1: remove it."; e.Error.Message != want {
		t.Errorf("API message error = %q, want %q", e.Error.Message, want)
	}
	e = apiErr{}
	api.json("POST", "/api/v1/conversations", map[string]string{"agent": "asker", "text": "hi\x07"}, 422, &e)
	if !strings.Contains(e.Error.Message, "(U+0007)") {
		t.Errorf("API start error = %q", e.Error.Message)
	}
	events, err := as.db.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Kind == domain.EventUserMessage && ev.Text != "plan it" {
			t.Errorf("a refused message was stored: %q", ev.Text)
		}
	}
	if rec, _ := as.db.Question(context.Background(), 1); !rec.Pending() {
		t.Error("a refused message superseded the pending question")
	}
}

// Over the API a decline reason is held to the same limit, with a 422 that says why.
func TestAPI_DeclineReasonLimit(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	api := as.token(t, "ann")
	var started apiConv
	api.json("POST", "/api/v1/conversations", map[string]string{"agent": "asker", "text": "plan it"}, 201, &started)
	as.waitState(t, started.Conversation.ID, domain.StateWaiting)
	var e apiErr
	api.json("POST", "/api/v1/questions/1/decline", map[string]string{"reason": strings.Repeat("x", 2001)}, 422, &e)
	if want := "The reason must be at most 2000 characters (this has 2001)."; e.Error.Message != want {
		t.Errorf("API decline error = %q, want %q", e.Error.Message, want)
	}
	api.json("POST", "/api/v1/questions/1/decline", map[string]string{"reason": strings.Repeat("x", 2000)}, 200, nil)
}

// Titles and display names read as what they are: direction controls go, control
// characters are refused with a message.
func TestNames_TitleAndDisplayNameCleaned(t *testing.T) {
	ts := newTestServer(t, newDB(t), readerAgent())
	path := ts.start(t, "reader", "\u202Eexe.pdf about the invoice")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateDone)
	ctx := context.Background()
	if c, _ := ts.db.Conversation(ctx, id); c.Title != "exe.pdf about the invoice" {
		t.Errorf("title from the first message = %q", c.Title)
	}
	if code, _, _ := ts.post(t, path+"/rename", url.Values{"title": {"Invoice \u2066gpj.exe\u2069"}}); code != http.StatusSeeOther {
		t.Fatalf("rename = %d", code)
	}
	if c, _ := ts.db.Conversation(ctx, id); c.Title != "Invoice gpj.exe" {
		t.Errorf("renamed title = %q, want %q", c.Title, "Invoice gpj.exe")
	}
	if code, body, _ := ts.post(t, path+"/rename", url.Values{"title": {"bell\x07"}}); code != http.StatusUnprocessableEntity || !strings.Contains(body, "A title contains a control character (U+0007)") {
		t.Errorf("rename with a bell = %d %.300s", code, body)
	}

	if code, body, _ := ts.post(t, "/settings", url.Values{"display_name": {"Ann\u202E nnA"}}); code != http.StatusSeeOther {
		t.Fatalf("settings = %d %.300s", code, body)
	}
	users, err := ts.db.Users(ctx)
	if err != nil || len(users) != 1 || users[0].DisplayName != "Ann nnA" {
		t.Fatalf("display name = %+v, %v; want %q", users, err, "Ann nnA")
	}
	if code, body, _ := ts.post(t, "/settings", url.Values{"display_name": {"Ann\x00"}}); code != http.StatusUnprocessableEntity || !strings.Contains(body, "The name contains a control character (U+0000)") {
		t.Errorf("display name with NUL = %d %.300s", code, body)
	}
}
