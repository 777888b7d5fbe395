package agent_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/parley-chat/parley/agent"
)

func TestUserInputRequest_Question(t *testing.T) {
	answer := []agent.Field{{Name: "answer", Label: "Your answer", Kind: agent.KindTextarea, Required: true}}
	approval := []agent.Field{
		{Name: "decision", Label: "Decision", Kind: agent.KindSelect, Required: true,
			Options: []agent.Option{{Value: "approve", Label: "Approve"}, {Value: "reject", Label: "Reject"}}},
		{Name: "comment", Label: "Comment", Kind: agent.KindTextarea},
	}
	selection := func(opts ...agent.Option) []agent.Field {
		return []agent.Field{
			{Name: "choice", Label: "Your choice", Kind: agent.KindSelect, Required: true,
				Options: append(opts, agent.Option{Value: agent.OtherChoice, Label: "Something else (say which below)"})},
			{Name: "other", Label: "Something else", Kind: agent.KindText, Description: "If none of these fits, say what you would prefer."},
		}
	}
	tests := []struct {
		name     string
		req      agent.UserInputRequest
		wantType agent.RequestType
		want     []agent.Field
	}{
		{"Clarification", agent.UserInputRequest{Prompt: "Which repo?", RequestType: agent.RequestClarification},
			agent.RequestClarification, answer},
		{"EmptyTypeIsClarification", agent.UserInputRequest{Prompt: "Which repo?"}, agent.RequestClarification, answer},
		{"UnknownTypeIsClarification", agent.UserInputRequest{Prompt: "?", RequestType: "survey"}, agent.RequestClarification, answer},
		{"TypeCase", agent.UserInputRequest{Prompt: "?", RequestType: " Approval "}, agent.RequestApproval, approval},
		{"Approval", agent.UserInputRequest{Prompt: "Deploy?", RequestType: agent.RequestApproval, Context: map[string]any{"env": "prod"}},
			agent.RequestApproval, approval},
		{"SelectionStrings", agent.UserInputRequest{Prompt: "Pick", RequestType: agent.RequestSelection,
			Context: map[string]any{"options": []any{"red", " blue ", "red", ""}}},
			agent.RequestSelection, selection(agent.Option{Value: "red"}, agent.Option{Value: "blue"})},
		{"SelectionGoStrings", agent.UserInputRequest{Prompt: "Pick", RequestType: agent.RequestSelection,
			Context: map[string]any{"choices": []string{"a", "b"}}},
			agent.RequestSelection, selection(agent.Option{Value: "a"}, agent.Option{Value: "b"})},
		{"SelectionVenues", agent.UserInputRequest{Prompt: "Which venue?", RequestType: agent.RequestSelection,
			Context: map[string]any{"city": "Seattle", "venues": []any{
				map[string]any{"id": "pike", "name": "Pike Loft", "capacity": 40.0, "price": 1200.0},
				map[string]any{"id": 7.0, "name": "Dockside", "location": "Ballard", "price": 89.5, "currency": "EUR"},
				map[string]any{"name": "Garden Room"},
				map[string]any{"title": "Roof", "price": "ask", "capacity": "12-20"},
				map[string]any{"price": 10.0},
			}}},
			agent.RequestSelection, selection(
				agent.Option{Value: "pike", Label: "Pike Loft — capacity 40, $1,200"},
				agent.Option{Value: "7", Label: "Dockside — Ballard, €89.50"},
				agent.Option{Value: "Garden Room"},
				agent.Option{Value: "Roof", Label: "Roof — capacity 12-20, ask"},
			)},
		{"SelectionStructs", agent.UserInputRequest{Prompt: "Pick", RequestType: agent.RequestSelection,
			Context: map[string]any{"items": []struct {
				Value string `json:"value"`
				Label string `json:"label"`
			}{{"s", "Small"}, {"l", "Large"}}}},
			agent.RequestSelection, selection(agent.Option{Value: "s", Label: "Small"}, agent.Option{Value: "l", Label: "Large"})},
		{"SelectionFirstListByKey", agent.UserInputRequest{Prompt: "Pick", RequestType: agent.RequestSelection,
			Context: map[string]any{"zebra": []any{"z"}, "flights": []any{map[string]any{"id": "ua1", "name": "UA 1", "price": 1999.99, "currency": "CHF"}}, "empty": []any{}}},
			agent.RequestSelection, selection(agent.Option{Value: "ua1", Label: "UA 1 — 1,999.99 CHF"})},
		{"SelectionNoOptionsIsClarification", agent.UserInputRequest{Prompt: "Pick", RequestType: agent.RequestSelection,
			Context: map[string]any{"note": "none yet", "options": []any{}}},
			agent.RequestSelection, answer},
		{"SelectionNilContext", agent.UserInputRequest{Prompt: "Pick", RequestType: agent.RequestSelection}, agent.RequestSelection, answer},
		{"ExplicitFields", agent.UserInputRequest{Prompt: "Details", RequestType: agent.RequestSelection,
			Context: map[string]any{"options": []any{"ignored"}},
			Fields: []agent.Field{
				{Name: " title ", Kind: "TEXT", Required: true},
				{Name: "size", Kind: "dropdown", Options: []agent.Option{{Value: "s"}, {Value: "s"}}},
				{Name: "when", Kind: "calendar"},
				{Name: "pick", Kind: agent.KindSelect},
				{Name: "pw", Kind: "password"},
			}},
			agent.RequestSelection, []agent.Field{
				{Name: "title", Kind: agent.KindText, Required: true},
				{Name: "size", Kind: agent.KindSelect, Options: []agent.Option{{Value: "s"}}},
				{Name: "when", Kind: agent.KindText},
				{Name: "pick", Kind: agent.KindText},
				{Name: "pw", Kind: "password"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.req.Question()
			// The context goes with the question as the agent sent it: the person decides by it.
			want := agent.Question{Message: tt.req.Prompt, Type: tt.wantType, Fields: tt.want, Context: tt.req.Context}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
			if err := agent.RefuseSecrets(got).Check(); err != nil {
				t.Errorf("got Check() = %v, want nil", err)
			}
		})
	}
}

func TestUserInputRequest_QuestionFromJSON(t *testing.T) {
	var req agent.UserInputRequest
	raw := `{"prompt": "Which venue?", "request_type": "selection", "context": {"venues": [{"id": 1, "name": "Hall", "capacity": 100}]}}`
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		t.Fatal(err)
	}
	got := req.Question().Fields[0].Options
	want := []agent.Option{{Value: "1", Label: "Hall — capacity 100"}, {Value: agent.OtherChoice, Label: "Something else (say which below)"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
