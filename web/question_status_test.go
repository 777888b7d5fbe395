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

// An answer posted from the page says its outcome in its status (accepted 200, invalid 422,
// too large to read 413, resolved before 409) and patches the question's card as the person sees it; the API says
// the same outcomes in the same statuses.
func TestAnswerStatus(t *testing.T) {
	a := askerAgent(func() domain.Question { q := askerQuestion(); q.AllowCancel = true; return q })
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, a)
	ann, api := as.signIn(t, "ann"), as.token(t, "ann")
	code, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"Help me plan"}}, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("start = %d", code)
	}
	as.waitState(t, convID(t, h.Get("Location")), domain.StateWaiting)

	datastar := map[string]string{"Datastar-Request": "true"}
	tests := []struct {
		name         string
		path         string
		form         url.Values
		wantStatus   int
		wantContains []string
	}{
		{"invalid answer: field messages, typed values kept", "/questions/1/answer",
			url.Values{"name": {"ab"}, "count": {"11"}, "color": {"blue"}}, http.StatusUnprocessableEntity,
			[]string{"selector #q-1", "Input required", "at least 3", "between 1 and 10", `value="ab"`, `value="11"`, `<option value="blue" selected>`}},
		{"a form too large to read: the question says so", "/questions/1/decline",
			url.Values{"_reason": {strings.Repeat("x", web.MaxBodyBytes)}}, http.StatusRequestEntityTooLarge,
			[]string{"selector #q-1", "Input required", "too large"}},
		{"accepted", "/questions/1/answer", url.Values{"name": {"Apollo"}, "count": {"7"}}, http.StatusOK,
			[]string{"selector #q-1", "Answered", "Apollo"}},
		{"answered again: the card as it stands", "/questions/1/answer", url.Values{"name": {"Zeus"}, "count": {"2"}}, http.StatusConflict,
			[]string{"selector #q-1", "Answered", "Apollo"}},
		{"declined after the answer", "/questions/1/decline", url.Values{"_reason": {"no"}}, http.StatusConflict,
			[]string{"selector #q-1", "Answered", "Apollo"}},
		{"cancelled after the answer", "/questions/1/cancel", url.Values{}, http.StatusConflict,
			[]string{"selector #q-1", "Answered", "Apollo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, h := ann.do(http.MethodPost, tt.path, tt.form, datastar)
			if code != tt.wantStatus || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("POST %s = %d %s, want %d with the card as patches", tt.path, code, h.Get("Content-Type"), tt.wantStatus)
			}
			for _, want := range tt.wantContains {
				if !strings.Contains(body, want) {
					t.Errorf("the patch lacks %q:\n%s", want, body)
				}
			}
			if strings.Contains(body, "Zeus") {
				t.Error("the card shows the refused answer as given")
			}
		})
	}
	rec, err := as.db.Question(context.Background(), 1)
	if err != nil || rec.Resolution.Values["name"] != "Apollo" {
		t.Fatalf("stored = %+v, %v; want the one accepted answer", rec.Resolution, err)
	}

	// The API, as before: 409 with the question as it stands.
	var e apiErr
	api.json("POST", "/api/v1/questions/1/answer", map[string]any{"values": map[string]any{"name": "Zeus", "count": 2}}, http.StatusConflict, &e)
	if e.Error.Question == nil || e.Error.Question.State != "answered" {
		t.Fatalf("API second answer = %+v", e)
	}
}
