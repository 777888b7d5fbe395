package openai_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

// split cuts s into pieces of n bytes, as a stream would deliver it.
func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// A code answer is not a structured response: it streams as it comes, shown once.
func TestStep_CodeBlockStreams(t *testing.T) {
	for _, reply := range []string{"```go\nfmt.Println(1)\n```", "```json\n[1, 2, 3]\n```", "```\nplain\n```"} {
		srv := newFakeServer(t, text(split(reply, 7)...))
		c := newConvo(t, newAgent(t, srv.url()))
		rec := c.MustSend("Show me")
		if len(rec.Deltas) < 2 || strings.Join(rec.Deltas, "") != reply {
			t.Errorf("deltas for %q: got %q, want it streamed in pieces", reply, rec.Deltas)
		}
		if got := rec.Messages(); !slices.Equal(got, []string{reply}) {
			t.Errorf("messages: got %q, want [%q]", got, reply)
		}
	}
}

func TestStep_StructuredResponse(t *testing.T) {
	const bare = `{"is_task_complete": true, "require_user_input": false, "content": "Your party is **booked**.", "metadata": null}`
	tests := []struct {
		name  string
		reply string
		want  string
	}{
		{"bare", bare, "Your party is **booked**."},
		{"fenced", "```json\n" + bare + "\n```", "Your party is **booked**."},
		{"leading space and bare fence", "\n ```\n" + bare + "```", "Your party is **booked**."},
		{"broken JSON", `{"is_task_complete": true, "content": "Your party is`, `{"is_task_complete": true, "content": "Your party is`},
		{"JSON the person asked for", `{"name": "Ada", "age": 36}`, `{"name": "Ada", "age": 36}`},
		{"text after the JSON", bare + "\nHope this helps!", bare + "\nHope this helps!"},
		{"empty content", `{"is_task_complete": true, "content": ""}`, `{"is_task_complete": true, "content": ""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, text(split(tt.reply, 7)...))
			c := newConvo(t, newAgent(t, srv.url()))
			rec := c.MustSend("Book it")
			// Held back until the end, then shown once, whole.
			if got, want := rec.Deltas, []string{tt.want}; !slices.Equal(got, want) {
				t.Errorf("deltas: got %q, want %q", got, want)
			}
			if got, want := rec.Messages(), []string{tt.want}; !slices.Equal(got, want) {
				t.Errorf("messages: got %q, want %q", got, want)
			}
		})
	}
}

func TestStep_StructuredResponseAsks(t *testing.T) {
	reply := "```json\n" + `{"is_task_complete": false, "require_user_input": true, "content": "I need the branch.",
 "metadata": {"user_input": true, "input_fields": [
  {"name": "branch_name", "description": "Source branch", "type": "text", "required": true},
  {"name": "base", "type": "select", "options": ["main", "develop"], "required": "yes"}]}}` + "\n```"
	srv := newFakeServer(t, text(split(reply, 11)...))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Open a PR")
	if len(rec.Deltas) != 0 || len(rec.Messages()) != 0 {
		t.Errorf("text shown besides the form: deltas %q", rec.Deltas)
	}
	qs := rec.Questions()
	if len(qs) != 1 {
		t.Fatalf("got %d questions, want 1", len(qs))
	}
	q := qs[0]
	if q.Message != "I need the branch." || q.Key != "" || q.Asker != "Model helper" {
		t.Errorf("question: got message %q key %q asker %q", q.Message, q.Key, q.Asker)
	}
	if len(q.Fields) != 2 || q.Fields[1].Kind != domain.KindSelect || !q.Fields[1].Required {
		t.Fatalf("fields: got %+v", q.Fields)
	}

	// The form goes back to the model as its UserInputMetaData message, the answers as the
	// person's message.
	c.Answer(q, form("branch_name", "fix-login", "base", "main"))
	srv.then(text("Opening the PR."))
	c.MustResume()
	req := srv.last()
	if got, want := roles(req), []string{"system", "user", "assistant", "user"}; !slices.Equal(got, want) {
		t.Fatalf("roles: got %v, want %v", got, want)
	}
	if got := req.Messages[2].Content; got != domain.FormatUserInputMetaData(q) {
		t.Errorf("form message: got %s", got)
	}
	if got, want := req.Messages[3].Content, "My answers to your form:\n- branch_name: fix-login\n- base: main"; got != want {
		t.Errorf("answers: got %q, want %q", got, want)
	}
}

func TestStep_UserInputMetaDataPassesThrough(t *testing.T) {
	reply := `UserInputMetaData: {"require_user_input": true, "content": "To create the issue I need:", "metadata": {"user_input": true, "input_fields": [{"name": "issue_title", "description": "Title", "type": "text", "required": true}, {"name": "urgent", "type": "boolean"}]}}`
	srv := newFakeServer(t, text(split(reply, 9)...))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("File an issue")
	if got := strings.Join(rec.Deltas, ""); got != reply {
		t.Errorf("text: got %q, want it unchanged: %q", got, reply)
	}
	if len(rec.Deltas) < 2 {
		t.Errorf("got %d deltas, want the text streamed through", len(rec.Deltas))
	}
	qs := rec.Questions()
	if len(qs) != 1 || qs[0].Message != "To create the issue I need:" || qs[0].Key != "" {
		t.Fatalf("questions: got %+v", qs)
	}

	c.Resolve(domain.Resolution{QuestionID: qs[0].ID, Outcome: domain.Declined, Reason: "later"})
	srv.then(text("Fine, tell me when."))
	c.MustResume()
	req := srv.last()
	if got, want := roles(req), []string{"system", "user", "assistant", "user"}; !slices.Equal(got, want) {
		t.Fatalf("roles: got %v, want %v", got, want)
	}
	if got := req.Messages[2].Content; !strings.HasPrefix(got, "UserInputMetaData: ") || !strings.Contains(got, `"issue_title"`) {
		t.Errorf("form message: got %s", got)
	}
	if got, want := req.Messages[3].Content, "(I did not fill in your form: declined. later)"; got != want {
		t.Errorf("resolution: got %q, want %q", got, want)
	}
}

func TestStep_EmptyReply(t *testing.T) {
	srv := newFakeServer(t, text())
	c := newConvo(t, newAgent(t, srv.url()))
	_, err := c.Send("Hi")
	wantFault(t, err, "empty reply")
}

func TestStep_NoFormsWhenTheAgentMayNotAsk(t *testing.T) {
	reply := `UserInputMetaData: {"require_user_input": true, "content": "I need:", "metadata": {"input_fields": [{"name": "title", "type": "text"}]}}`
	srv := newFakeServer(t, text(split(reply, 9)...))
	c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) { c.AllowQuestions = false }))
	rec := c.MustSend("File an issue")
	if qs := rec.Questions(); len(qs) != 0 {
		t.Fatalf("questions: got %+v, want none from an agent with ask = false", qs)
	}
	msgs := rec.Messages()
	if len(msgs) != 1 || msgs[0] != reply {
		t.Fatalf("messages: got %+v, want the reply as the agent's text", msgs)
	}
	if len(rec.Live) < 2 {
		t.Errorf("live pieces: got %d, want the text streamed, not held back", len(rec.Live))
	}
	req := srv.last()
	if len(req.Tools) != 0 {
		t.Errorf("tools: got %d, want none", len(req.Tools))
	}
	if sys := req.Messages[0].Content; strings.Count(sys, "Do not ask for forms") != 1 || strings.Contains(sys, "UserInputMetaData") {
		t.Errorf("system prompt: want forms turned off once and the format never taught, got\n%s", sys)
	}
}
