package openai_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

func TestStep_ToolCallsAllAtIndexZero(t *testing.T) {
	// Some servers send each call whole, every one at index 0.
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		for _, c := range []struct{ id, args string }{
			{"call_a", `{"prompt":"First?","request_type":"clarification"}`},
			{"call_b", `{"prompt":"Second?","request_type":"clarification"}`},
		} {
			s.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": c.id, "type": "function",
				"function": map[string]any{"name": "request_user_input", "arguments": c.args}}}}, "")
		}
		s.chunk(map[string]any{}, "tool_calls")
		s.done()
	})
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Go")
	var keys []string
	for _, q := range rec.Questions() {
		keys = append(keys, q.Key+" "+q.Message)
	}
	if want := []string{"call_a First?", "call_b Second?"}; !slices.Equal(keys, want) {
		t.Errorf("questions: got %q, want %q", keys, want)
	}
}

func TestStep_SecretFieldsAreNoted(t *testing.T) {
	srv := newFakeServer(t, toolCalls("", askCall("call_s",
		`{"prompt":"Which repo?","request_type":"clarification","fields":[{"name":"repo","kind":"text","required":true},{"name":"github_token","kind":"text"}]}`)))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Clone it")
	qs := rec.Questions()
	if len(qs) != 1 || len(qs[0].Fields) != 1 || len(qs[0].Refused) != 1 {
		t.Fatalf("question: got %+v, want repo shown and github_token refused", qs)
	}
	c.Answer(qs[0], form("repo", "parley"))
	srv.then(text("Cloning."))
	c.MustResume()
	got := srv.last().Messages[3].Content
	for _, want := range []string{`"outcome":"answered"`, `"values":{"repo":"parley"}`, `"note":"The field \"github_token\" was not shown`} {
		if !strings.Contains(got, want) {
			t.Errorf("tool result %s does not contain %s", got, want)
		}
	}
}

func TestStep_InvalidFieldsAreToldToTheModel(t *testing.T) {
	srv := newFakeServer(t,
		toolCalls("", askCall("call_1", `{"prompt":"Details?","request_type":"clarification","fields":[{"name":"a","kind":"text"},{"name":"a","kind":"number"}]}`)),
		toolCalls("", askCall("call_2", `{"prompt":"Details?","request_type":"clarification","fields":[{"name":"a","kind":"text"}]}`)),
	)
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Go")
	if qs := rec.Questions(); len(qs) != 1 || qs[0].Key != "call_2" {
		t.Fatalf("questions: got %+v, want one for call_2", qs)
	}
	if got := srv.last().Messages[3].Content; !strings.Contains(got, `field name \"a\" is used twice`) {
		t.Errorf("the model was told %s", got)
	}
}

func TestStep_StructuredFormWithoutContent(t *testing.T) {
	srv := newFakeServer(t, text(`{"require_user_input": true, "metadata": {"input_fields": [{"name": "city", "type": "text", "required": true}]}}`))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Weather?")
	qs := rec.Questions()
	if len(qs) != 1 || qs[0].Fields[0].Name != "city" || len(rec.Messages()) != 0 {
		t.Fatalf("questions %+v, messages %q: want the city form only", qs, rec.Messages())
	}
	if qs[0].Type != "" && qs[0].Type != domain.RequestClarification {
		t.Errorf("type: got %q", qs[0].Type)
	}
}

// A question of nothing but secrets is told back to the model, not asked: asking would be
// declined at once and resume the model in a loop.
func TestStep_OnlySecretsIsToldToTheModel(t *testing.T) {
	secret := toolCalls("", askCall("", `{"prompt":"Your key?","request_type":"clarification","fields":[{"name":"api_key","kind":"text","required":true}]}`))
	srv := newFakeServer(t, secret, secret, secret)
	c := newConvo(t, newAgent(t, srv.url()))
	rec, err := c.Send("Deploy")
	wantFault(t, err, "could not be used after 3 tries")
	if len(rec.Questions()) != 0 || len(srv.sent()) != 3 {
		t.Fatalf("asked %d questions in %d requests, want none in 3", len(rec.Questions()), len(srv.sent()))
	}
	if got := srv.last().Messages[3].Content; !strings.Contains(got, "only for secrets") || !strings.Contains(got, "api_key") {
		t.Errorf("the model was told %s", got)
	}
}

// With questions off, a structured response that asks is shown as its text.
func TestStep_NoQuestionsMeansNoForms(t *testing.T) {
	reply := `{"is_task_complete": false, "require_user_input": true, "content": "Which branch?", "metadata": {"user_input": true, "input_fields": [{"name": "branch", "type": "text", "required": true}]}}`
	srv := newFakeServer(t, text(split(reply, 9)...))
	a, err := openai.New(openai.Config{Name: "m", BaseURL: srv.url(), Model: "m", AllowQuestions: false})
	if err != nil {
		t.Fatal(err)
	}
	rec := newConvo(t, a).MustSend("Open a PR")
	if len(rec.Questions()) != 0 || !slices.Equal(rec.Messages(), []string{"Which branch?"}) {
		t.Fatalf("questions %v, messages %q; want no form and the content shown", rec.Questions(), rec.Messages())
	}
}

// A new message after a fault joins the unanswered one: roles keep alternating.
func TestStep_UserMessagesInARowAreOneTurn(t *testing.T) {
	srv := newFakeServer(t, status(500, "application/json", `{"error":{"message":"down"}}`), text("Fine."))
	c := newConvo(t, newAgent(t, srv.url()))
	if _, err := c.Send("First"); err == nil {
		t.Fatal("want the fault")
	}
	c.MustSend("Second")
	last := srv.last()
	if got := roles(last); !slices.Equal(got, []string{"system", "user"}) {
		t.Fatalf("roles: got %v, want [system user]", got)
	}
	if got := last.Messages[1].Content; got != "First\n\nSecond" {
		t.Errorf("user turn = %q", got)
	}
}
