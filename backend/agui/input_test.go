package agui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestHistory(t *testing.T) {
	q := &domain.Question{ID: 9, Key: "call-7", Message: "Which venue?", Type: domain.RequestSelection,
		Fields: []domain.Field{{Name: "choice", Kind: domain.KindSelect}}}
	events := []domain.Event{
		{ID: 1, Kind: domain.EventUserMessage, Text: "raw text", Intent: "find a venue"},
		{ID: 2, Kind: domain.EventAgentMessage, MessageID: "5-1", Text: "Looking."},
		{Kind: domain.EventCheckpoint, Checkpoint: json.RawMessage(`{"backend":"agui","v":1,"thread":"t","said":["their-m1"]}`)},
		{Kind: domain.EventCheckpoint, Checkpoint: json.RawMessage(`{"backend":"agui","v":1,"thread":"t","said":["no-message-for-it"]}`)},
		{ID: 3, Kind: domain.EventToolCall, ToolCall: &domain.ToolCall{Key: "agui-c1", ID: "c1", Tool: "search", Status: domain.ToolRunning}},
		{ID: 4, Kind: domain.EventToolCall, ToolCall: &domain.ToolCall{Key: "agui-c1", ID: "c1", Tool: "search", Arguments: json.RawMessage(`{"q":"loft"}`), Status: domain.ToolRunning, Update: true}},
		{ID: 5, Kind: domain.EventToolCall, ToolCall: &domain.ToolCall{Key: "agui-c1", ID: "c1", Tool: "search", Arguments: json.RawMessage(`{"q":"loft"}`), Status: domain.ToolDone, Result: "2 found", Update: true}},
		{ID: 6, Kind: domain.EventQuestionAsked, Question: q},
		{ID: 7, Kind: domain.EventQuestionResolved, Resolution: &domain.Resolution{QuestionID: 9, Outcome: domain.Answered, Values: map[string]any{"choice": "Pike Loft"}}},
		{ID: 8, Kind: domain.EventAgentMessage, MessageID: "6-1", Text: "half a sen", Interrupted: true},
		{ID: 9, Kind: domain.EventQuestionAsked, Question: &domain.Question{ID: 10, Key: "interrupt:i1", Message: "ok?"}},
		{ID: 10, Kind: domain.EventUserMessage, Text: "next"},
	}
	got := history(events)
	var b strings.Builder
	for _, m := range got {
		b.WriteString(m.ID + " " + m.Role)
		if m.Content != nil {
			b.WriteString(" " + *m.Content)
		}
		for _, c := range m.ToolCalls {
			b.WriteString(" call " + c.ID + " " + c.Function.Name + " " + c.Function.Arguments)
		}
		if m.ToolCallID != "" {
			b.WriteString(" for " + m.ToolCallID)
		}
		b.WriteString("\n")
	}
	want := `user-1 user find a venue
their-m1 assistant Looking.
call-c1 assistant call c1 search {"q":"loft"}
result-c1 tool 2 found for c1
call-call-7 assistant call call-7 request_user_input {"prompt":"Which venue?","request_type":"selection"}
result-call-7 tool {"outcome":"answered","values":{"choice":"Pike Loft"}} for call-7
user-10 user next
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// No null anywhere: an empty history is an empty list.
	if b, _ := json.Marshal(history(nil)); string(b) != "[]" {
		t.Errorf("empty history: %s", b)
	}
}

func TestResume(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cp := checkpoint{Open: []openInterrupt{{ID: "a"}, {ID: "b"}, {ID: "c", Refusal: "It asks for a password."}, {ID: "d", Expires: "2026-11-27T11:00:00Z"}, {ID: "e"}}}
	ask := func(id int64, key string) domain.Event {
		return domain.Event{Kind: domain.EventQuestionAsked, Question: &domain.Question{ID: id, Key: key}}
	}
	res := func(id int64, o domain.Outcome, reason string, v map[string]any) domain.Event {
		return domain.Event{Kind: domain.EventQuestionResolved, Resolution: &domain.Resolution{QuestionID: id, Outcome: o, Reason: reason, Values: v}}
	}
	events := []domain.Event{
		{Kind: domain.EventCheckpoint},
		ask(1, "interrupt:a"), ask(2, "interrupt:b"), ask(4, "interrupt:d"), ask(5, "interrupt:e"),
		res(1, domain.Answered, "", map[string]any{"n": int64(3), "tags": []string{"x"}}),
		res(2, domain.Declined, "not now", nil),
		res(4, domain.Answered, "", map[string]any{"x": "late"}),
		res(5, domain.Superseded, "The person sent a new message instead of answering.", nil),
	}
	b, _ := json.Marshal(resume(events, cp, 0, now, false))
	want := `[{"interruptId":"a","status":"resolved","payload":{"n":3,"tags":["x"]}},` +
		`{"interruptId":"b","status":"cancelled","payload":{"reason":"not now"}},` +
		`{"interruptId":"c","status":"cancelled","payload":{"reason":"It asks for a password."}},` +
		`{"interruptId":"d","status":"cancelled","payload":{"reason":"The answer came after the interrupt expired."}},` +
		`{"interruptId":"e","status":"cancelled","payload":{"reason":"The person sent a new message instead of answering."}}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestApplyPatch(t *testing.T) {
	doc, _ := decodeValue(json.RawMessage(`{"a":{"b":[1,2,3]},"c":"x"}`))
	ops, err := decodePatch(json.RawMessage(`[
		{"op":"add","path":"/a/b/1","value":9},
		{"op":"remove","path":"/a/b/0"},
		{"op":"replace","path":"/c","value":{"d":true}},
		{"op":"move","from":"/c","path":"/e"},
		{"op":"copy","from":"/a/b","path":"/f"},
		{"op":"add","path":"/f/-","value":"end"},
		{"op":"test","path":"/e/d","value":true},
		{"op":"add","path":"/g~1h","value":null}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := applyPatch(doc, ops)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"a":{"b":[9,2,3]},"e":{"d":true},"f":[9,2,3,"end"],"g/h":null}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	if b, _ := json.Marshal(doc); string(b) != `{"a":{"b":[1,2,3]},"c":"x"}` {
		t.Errorf("the old state changed: %s", b)
	}
	for _, bad := range []string{
		`[{"op":"remove","path":"/nope"}]`,
		`[{"op":"test","path":"/c","value":"y"}]`,
		`[{"op":"add","path":"/a/b/7","value":1}]`,
		`[{"op":"move","from":"/a","path":"/a/x"}]`,
	} {
		ops, err := decodePatch(json.RawMessage(bad))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := applyPatch(doc, ops); err == nil {
			t.Errorf("%s applied", bad)
		}
	}
}
