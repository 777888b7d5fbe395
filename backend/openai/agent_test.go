package openai_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

func TestStep_StreamsText(t *testing.T) {
	srv := newFakeServer(t, text("Hello", ", ", "world", "!"))
	temp := 0.2
	c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) { c.Temperature = &temp }))
	rec := c.MustSend("Say hello")

	if got, want := rec.Deltas, []string{"Hello", ", ", "world", "!"}; !slices.Equal(got, want) {
		t.Errorf("deltas: got %q, want %q", got, want)
	}
	if got, want := rec.Messages(), []string{"Hello, world!"}; !slices.Equal(got, want) {
		t.Errorf("messages: got %q, want %q", got, want)
	}
	req := srv.last()
	if req.Model != "fake-model" || !req.Stream {
		t.Errorf("model %q stream %v: want fake-model, streaming", req.Model, req.Stream)
	}
	if req.Temperature == nil || *req.Temperature != temp {
		t.Errorf("temperature: got %v, want %v", req.Temperature, temp)
	}
	if got, want := roles(req), []string{"system", "user"}; !slices.Equal(got, want) {
		t.Fatalf("roles: got %v, want %v", got, want)
	}
	sys := req.Messages[0].Content
	for _, want := range []string{"You are a careful helper.", "request_user_input", "UserInputMetaData:", "is_task_complete"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if got := req.Messages[1].Content; got != "Say hello" {
		t.Errorf("user message: got %q", got)
	}
	if len(req.Tools) != 1 || req.Tools[0].Function.Name != "request_user_input" || req.Tools[0].Type != "function" {
		t.Fatalf("tools: got %+v, want request_user_input", req.Tools)
	}
	params := req.Tools[0].Function.Parameters
	props, _ := params["properties"].(map[string]any)
	for _, p := range []string{"prompt", "context", "request_type", "fields"} {
		if props[p] == nil {
			t.Errorf("tool parameters lack %q", p)
		}
	}
	if got, want := params["required"], []any{"prompt", "request_type"}; !reflect.DeepEqual(got, want) {
		t.Errorf("required: got %v, want %v", got, want)
	}
}

func TestStep_NoToolsWithoutQuestions(t *testing.T) {
	srv := newFakeServer(t, text("Fine."))
	c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) { c.AllowQuestions = false; c.SystemPrompt = "" }))
	c.MustSend("Hi")
	req := srv.last()
	if len(req.Tools) != 0 {
		t.Errorf("tools offered: %+v", req.Tools)
	}
	if strings.Contains(req.Messages[0].Content, "request_user_input") {
		t.Errorf("system prompt teaches the tool:\n%s", req.Messages[0].Content)
	}
	if strings.Contains(string(req.raw), `"temperature"`) {
		t.Errorf("temperature sent although not configured: %s", req.raw)
	}
}

func TestStep_ToolCallAsks(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantType   domain.RequestType
		wantFields []string
		check      func(t *testing.T, q domain.Question)
	}{
		{
			name:       "clarification",
			args:       []string{`{"prompt": "How many `, `guests?", "request_type": "clarif`, `ication"}`},
			wantType:   domain.RequestClarification,
			wantFields: []string{"answer"},
		},
		{
			name:       "selection",
			args:       []string{`{"prompt":"Which venue?","request_type":"selection",`, `"context":{"venues":[{"id":"loft","name":"Pike Loft"},{"id":"hall","name":"Union Hall"}]}}`},
			wantType:   domain.RequestSelection,
			wantFields: []string{"choice", "other"},
			check: func(t *testing.T, q domain.Question) {
				var values []string
				for _, o := range q.Fields[0].Options {
					values = append(values, o.Value)
				}
				if want := []string{"loft", "hall", domain.OtherChoice}; !slices.Equal(values, want) {
					t.Errorf("options: got %v, want %v", values, want)
				}
			},
		},
		{
			name:       "approval",
			args:       []string{`{"prompt":"Book it?","request_type":"approval","context":{"total":1200}}`},
			wantType:   domain.RequestApproval,
			wantFields: []string{"decision", "comment"},
		},
		{
			name: "explicit fields",
			args: []string{`{"prompt":"Details?","request_type":"clarification","fields":[`,
				`{"name":"guests","label":"Guests","kind":"integer","required":true,"min":1,"max":"500"},`,
				`{"name":"diet","type":"multi_select","options":[{"value":"veg","label":"Vegetarian"},"vegan"],"minItems":1},`,
				`{"name":"date","kind":"date","default":"2025-06-01"}]}`},
			wantType:   domain.RequestClarification,
			wantFields: []string{"guests", "diet", "date"},
			check: func(t *testing.T, q domain.Question) {
				g := q.Fields[0]
				if g.Kind != domain.KindInteger || !g.Required || g.Min == nil || *g.Min != 1 || g.Max == nil || *g.Max != 500 || g.Label != "Guests" {
					t.Errorf("guests field: got %+v", g)
				}
				d := q.Fields[1]
				if d.Kind != domain.KindMultiselect || len(d.Options) != 2 || d.MinItems == nil || *d.MinItems != 1 {
					t.Errorf("diet field: got %+v", d)
				}
				if q.Fields[2].Kind != domain.KindDate || q.Fields[2].Default != "2025-06-01" {
					t.Errorf("date field: got %+v", q.Fields[2])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, toolCalls("", askCall("call_abc", tt.args...)))
			c := newConvo(t, newAgent(t, srv.url()))
			rec := c.MustSend("Plan a party")
			qs := rec.Questions()
			if len(qs) != 1 {
				t.Fatalf("got %d questions, want 1", len(qs))
			}
			q := qs[0]
			if q.Key != "call_abc" || q.Asker != "Model helper" || q.Type != tt.wantType {
				t.Errorf("key %q asker %q type %q: want call_abc, Model helper, %s", q.Key, q.Asker, q.Type, tt.wantType)
			}
			var names []string
			for _, f := range q.Fields {
				names = append(names, f.Name)
			}
			if !slices.Equal(names, tt.wantFields) {
				t.Errorf("fields: got %v, want %v", names, tt.wantFields)
			}
			if tt.check != nil {
				tt.check(t, q)
			}
			if len(rec.Messages()) != 0 {
				t.Errorf("messages: got %q, want none", rec.Messages())
			}
		})
	}
}

func TestStep_ParallelToolCalls(t *testing.T) {
	srv := newFakeServer(t, toolCalls("I need two things.",
		askCall("call_1", `{"prompt":"Which city?",`, `"request_type":"clarification"}`),
		askCall("call_2", `{"prompt":"Which`, ` day?","request_type":"selection","context":{"options":["Fri","Sat"]}}`),
	))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Plan a party")
	qs := rec.Questions()
	if len(qs) != 2 || qs[0].Key != "call_1" || qs[1].Key != "call_2" {
		t.Fatalf("questions: got %+v, want call_1 and call_2", qs)
	}
	if got, want := rec.Messages(), []string{"I need two things."}; !slices.Equal(got, want) {
		t.Errorf("messages: got %q, want %q", got, want)
	}
	// Answered in the other order: the tool results still follow the calls' order.
	c.Answer(qs[1], form("choice", "Sat"))
	c.Answer(qs[0], form("answer", "Seattle"))

	srv.then(text("Seattle on Saturday it is."))
	rec = c.MustResume()
	if got, want := rec.Messages(), []string{"Seattle on Saturday it is."}; !slices.Equal(got, want) {
		t.Errorf("messages: got %q, want %q", got, want)
	}
	req := srv.last()
	if got, want := roles(req), []string{"system", "user", "assistant", "tool", "tool"}; !slices.Equal(got, want) {
		t.Fatalf("roles: got %v, want %v", got, want)
	}
	asst := req.Messages[2]
	if asst.Content != "I need two things." || len(asst.ToolCalls) != 2 {
		t.Fatalf("assistant turn: got %+v", asst)
	}
	for i, want := range []string{"call_1", "call_2"} {
		tc := asst.ToolCalls[i]
		if tc.ID != want || tc.Type != "function" || tc.Function.Name != "request_user_input" {
			t.Errorf("tool call %d: got %+v, want id %s", i, tc, want)
		}
	}
	if got, want := asst.ToolCalls[1].Function.Arguments, `{"prompt":"Which day?","request_type":"selection","context":{"options":["Fri","Sat"]}}`; got != want {
		t.Errorf("arguments: got %s, want %s", got, want)
	}
	wantResults := []struct{ id, content string }{
		{"call_1", `{"outcome":"answered","values":{"answer":"Seattle"}}`},
		{"call_2", `{"outcome":"answered","values":{"choice":"Sat"}}`},
	}
	for i, want := range wantResults {
		m := req.Messages[3+i]
		if m.ToolCallID != want.id || m.Content != want.content {
			t.Errorf("tool message %d: got %s %s, want %s %s", i, m.ToolCallID, m.Content, want.id, want.content)
		}
	}
}

func TestStep_ResumeAfterRestart(t *testing.T) {
	srv := newFakeServer(t, toolCalls("", askCall("call_r", `{"prompt":"Budget?","request_type":"clarification"}`)))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Plan a party")
	c.Answer(rec.Questions()[0], form("answer", "2000 dollars"))

	// The same resume step, delivered to the agent that asked and to a new one, as after a
	// restart: both send the same request.
	srv.then(text("Noted."), text("Noted."))
	c.History = append(c.History, domain.Event{Kind: domain.EventRunState, State: domain.StateRunning})
	c.Step++
	if _, err := c.Deliver(domain.TriggerResume); err != nil {
		t.Fatal(err)
	}
	first := srv.last()
	c.Agent = newAgent(t, srv.url())
	if _, err := c.Deliver(domain.TriggerResume); err != nil {
		t.Fatal(err)
	}
	after := srv.last()
	if got, want := string(after.raw), string(first.raw); got != want {
		t.Errorf("the restarted agent sent\n%s\nthe first one sends\n%s", got, want)
	}
	if got, want := roles(after), []string{"system", "user", "assistant", "tool"}; !slices.Equal(got, want) {
		t.Fatalf("roles: got %v, want %v", got, want)
	}
	if got, want := after.Messages[3].Content, `{"outcome":"answered","values":{"answer":"2000 dollars"}}`; got != want {
		t.Errorf("tool result: got %s, want %s", got, want)
	}
}

func TestStep_UnansweredOutcomes(t *testing.T) {
	srv := newFakeServer(t, toolCalls("", askCall("call_d", `{"prompt":"Approve?","request_type":"approval"}`)))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Go")
	c.Resolve(domain.Resolution{QuestionID: rec.Questions()[0].ID, Outcome: domain.Declined, Reason: "not now"})
	srv.then(text("Understood, I will not book."))
	c.MustResume()
	if got, want := srv.last().Messages[3].Content, `{"outcome":"declined","reason":"not now"}`; got != want {
		t.Errorf("declined: got %s, want %s", got, want)
	}

	// A question left pending is superseded by the next message.
	srv.then(toolCalls("", askCall("call_s", `{"prompt":"Which?","request_type":"clarification"}`)), text("OK, a new plan."))
	c.MustSend("Another thing")
	c.MustSend("Actually, forget it")
	req := srv.last()
	n := len(req.Messages)
	if req.Messages[n-2].ToolCallID != "call_s" || !strings.HasPrefix(req.Messages[n-2].Content, `{"outcome":"superseded"`) {
		t.Errorf("superseded result: got %+v", req.Messages[n-2])
	}
	if req.Messages[n-1].Role != "user" || req.Messages[n-1].Content != "Actually, forget it" {
		t.Errorf("last message: got %+v", req.Messages[n-1])
	}
}

func TestStep_CheckpointFormat(t *testing.T) {
	srv := newFakeServer(t, toolCalls("Hm.", askCall("call_c", `{"prompt":"Why?","request_type":"clarification"}`)))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Go")
	var cp map[string]any
	for _, ev := range rec.Events {
		if ev.Kind == domain.EventCheckpoint {
			if err := json.Unmarshal(ev.Checkpoint, &cp); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]any{"backend": "openai", "v": float64(1), "content": "Hm.", "tool_calls": []any{map[string]any{
		"id": "call_c", "name": "request_user_input", "arguments": `{"prompt":"Why?","request_type":"clarification"}`}}}
	if !reflect.DeepEqual(cp, want) {
		t.Errorf("checkpoint: got %v, want %v", cp, want)
	}
	if i, j := slices.IndexFunc(rec.Events, isKind(domain.EventCheckpoint)), slices.IndexFunc(rec.Events, isKind(domain.EventQuestionAsked)); i > j {
		t.Errorf("checkpoint stored after the question (%d > %d)", i, j)
	}
}

func isKind(k domain.EventKind) func(domain.Event) bool {
	return func(ev domain.Event) bool { return ev.Kind == k }
}

func TestStep_CancelStopsTheRun(t *testing.T) {
	srv := newFakeServer(t, toolCalls("", askCall("call_c", `{"prompt":"Deploy build 1.4.2?","request_type":"approval"}`)))
	c := newConvo(t, newAgent(t, srv.url()))
	rec := c.MustSend("Deploy it")
	q := rec.Questions()[0]
	if !q.AllowCancel {
		t.Fatal("the model's question offers no Cancel")
	}
	asked := len(srv.sent())
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Cancelled})
	rec = c.MustResume()
	if n := len(srv.sent()); n != asked {
		t.Errorf("the model was called %d more times after Cancel, want none", n-asked)
	}
	if got := rec.Messages(); len(got) != 1 || !strings.HasPrefix(got[0], "Stopped, as you asked.") {
		t.Errorf("messages: got %q", got)
	}

	// The next message goes on, and the model hears that its question was cancelled.
	srv.then(text("Alright."))
	c.MustSend("Let's talk about something else")
	req := srv.last()
	var result string
	for _, m := range req.Messages {
		if m.ToolCallID == "call_c" {
			result = m.Content
		}
	}
	if !strings.Contains(result, `"outcome":"cancelled"`) {
		t.Errorf("tool result: got %q, want the cancelled outcome", result)
	}
}

func TestStep_QuestionCarriesItsContext(t *testing.T) {
	for _, tt := range []struct {
		name, context string
		want          any
	}{
		{"text", `"Build 1.4.2 passed 212/212 tests. Rollback takes about 3 minutes."`, "Build 1.4.2 passed 212/212 tests. Rollback takes about 3 minutes."},
		{"object", `{"build":"1.4.2","tests":{"passed":212,"failed":0}}`, map[string]any{"build": "1.4.2", "tests": map[string]any{"passed": json.Number("212"), "failed": json.Number("0")}}},
		{"list", `["blue","green"]`, []any{"blue", "green"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := `{"prompt":"Approve deploying build 1.4.2 to production?","request_type":"approval","context":` + tt.context + `}`
			srv := newFakeServer(t, toolCalls("", askCall("call_x", args)))
			c := newConvo(t, newAgent(t, srv.url()))
			q := c.MustSend("Ship it").Questions()[0]
			if !reflect.DeepEqual(q.Context, tt.want) {
				t.Errorf("context: got %#v, want %#v", q.Context, tt.want)
			}
			// The model reads its own call back exactly as it sent it.
			c.Answer(q, form("decision", "approve"))
			srv.then(text("Deploying."))
			c.MustResume()
			if got := srv.last().Messages[2].ToolCalls[0].Function.Arguments; got != args {
				t.Errorf("arguments sent back: got %s, want %s", got, args)
			}
		})
	}
}
