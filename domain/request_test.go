package domain_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestUserInputRequest_Question(t *testing.T) {
	answer := []domain.Field{{Name: "answer", Label: "Your answer", Kind: domain.KindTextarea, Required: true}}
	approval := []domain.Field{
		{Name: "decision", Label: "Decision", Kind: domain.KindSelect, Required: true,
			Options: []domain.Option{{Value: "approve", Label: "Approve"}, {Value: "reject", Label: "Reject"}}},
		{Name: "comment", Label: "Comment", Kind: domain.KindTextarea},
	}
	selection := func(opts ...domain.Option) []domain.Field {
		return []domain.Field{
			{Name: "choice", Label: "Your choice", Kind: domain.KindSelect, Required: true,
				Options: append(opts, domain.Option{Value: domain.OtherChoice, Label: "Something else (say which below)"})},
			{Name: "other", Label: "Something else", Kind: domain.KindText, Description: "If none of these fits, say what you would prefer."},
		}
	}
	tests := []struct {
		name     string
		req      domain.UserInputRequest
		wantType domain.RequestType
		want     []domain.Field
	}{
		{"Clarification", domain.UserInputRequest{Prompt: "Which repo?", RequestType: domain.RequestClarification},
			domain.RequestClarification, answer},
		{"EmptyTypeIsClarification", domain.UserInputRequest{Prompt: "Which repo?"}, domain.RequestClarification, answer},
		{"UnknownTypeIsClarification", domain.UserInputRequest{Prompt: "?", RequestType: "survey"}, domain.RequestClarification, answer},
		{"TypeCase", domain.UserInputRequest{Prompt: "?", RequestType: " Approval "}, domain.RequestApproval, approval},
		{"Approval", domain.UserInputRequest{Prompt: "Deploy?", RequestType: domain.RequestApproval, Context: map[string]any{"env": "prod"}},
			domain.RequestApproval, approval},
		{"SelectionStrings", domain.UserInputRequest{Prompt: "Pick", RequestType: domain.RequestSelection,
			Context: map[string]any{"options": []any{"red", " blue ", "red", ""}}},
			domain.RequestSelection, selection(domain.Option{Value: "red"}, domain.Option{Value: "blue"})},
		{"SelectionGoStrings", domain.UserInputRequest{Prompt: "Pick", RequestType: domain.RequestSelection,
			Context: map[string]any{"choices": []string{"a", "b"}}},
			domain.RequestSelection, selection(domain.Option{Value: "a"}, domain.Option{Value: "b"})},
		{"SelectionVenues", domain.UserInputRequest{Prompt: "Which venue?", RequestType: domain.RequestSelection,
			Context: map[string]any{"city": "Seattle", "venues": []any{
				map[string]any{"id": "pike", "name": "Pike Loft", "capacity": 40.0, "price": 1200.0},
				map[string]any{"id": 7.0, "name": "Dockside", "location": "Ballard", "price": 89.5, "currency": "EUR"},
				map[string]any{"name": "Garden Room"},
				map[string]any{"title": "Roof", "price": "ask", "capacity": "12-20"},
				map[string]any{"price": 10.0},
			}}},
			domain.RequestSelection, selection(
				domain.Option{Value: "pike", Label: "Pike Loft — capacity 40, $1,200"},
				domain.Option{Value: "7", Label: "Dockside — Ballard, €89.50"},
				domain.Option{Value: "Garden Room"},
				domain.Option{Value: "Roof", Label: "Roof — capacity 12-20, ask"},
			)},
		{"SelectionStructs", domain.UserInputRequest{Prompt: "Pick", RequestType: domain.RequestSelection,
			Context: map[string]any{"items": []struct {
				Value string `json:"value"`
				Label string `json:"label"`
			}{{"s", "Small"}, {"l", "Large"}}}},
			domain.RequestSelection, selection(domain.Option{Value: "s", Label: "Small"}, domain.Option{Value: "l", Label: "Large"})},
		{"SelectionFirstListByKey", domain.UserInputRequest{Prompt: "Pick", RequestType: domain.RequestSelection,
			Context: map[string]any{"zebra": []any{"z"}, "flights": []any{map[string]any{"id": "ua1", "name": "UA 1", "price": 1999.99, "currency": "CHF"}}, "empty": []any{}}},
			domain.RequestSelection, selection(domain.Option{Value: "ua1", Label: "UA 1 — 1,999.99 CHF"})},
		{"SelectionNoOptionsIsClarification", domain.UserInputRequest{Prompt: "Pick", RequestType: domain.RequestSelection,
			Context: map[string]any{"note": "none yet", "options": []any{}}},
			domain.RequestSelection, answer},
		{"SelectionNilContext", domain.UserInputRequest{Prompt: "Pick", RequestType: domain.RequestSelection}, domain.RequestSelection, answer},
		{"ExplicitFields", domain.UserInputRequest{Prompt: "Details", RequestType: domain.RequestSelection,
			Context: map[string]any{"options": []any{"ignored"}},
			Fields: []domain.Field{
				{Name: " title ", Kind: "TEXT", Required: true},
				{Name: "size", Kind: "dropdown", Options: []domain.Option{{Value: "s"}, {Value: "s"}}},
				{Name: "when", Kind: "calendar"},
				{Name: "pick", Kind: domain.KindSelect},
				{Name: "pw", Kind: "password"},
			}},
			domain.RequestSelection, []domain.Field{
				{Name: "title", Kind: domain.KindText, Required: true},
				{Name: "size", Kind: domain.KindSelect, Options: []domain.Option{{Value: "s"}}},
				{Name: "when", Kind: domain.KindText},
				{Name: "pick", Kind: domain.KindText},
				{Name: "pw", Kind: "password"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.req.Question()
			// The context goes with the question as the agent sent it: the person decides by it.
			want := domain.Question{Message: tt.req.Prompt, Type: tt.wantType, Fields: tt.want, Context: tt.req.Context}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
			if err := domain.RefuseSecrets(got).Check(); err != nil {
				t.Errorf("got Check() = %v, want nil", err)
			}
		})
	}
}

func TestUserInputRequest_QuestionFromJSON(t *testing.T) {
	var req domain.UserInputRequest
	raw := `{"prompt": "Which venue?", "request_type": "selection", "context": {"venues": [{"id": 1, "name": "Hall", "capacity": 100}]}}`
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		t.Fatal(err)
	}
	got := req.Question().Fields[0].Options
	want := []domain.Option{{Value: "1", Label: "Hall — capacity 100"}, {Value: domain.OtherChoice, Label: "Something else (say which below)"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
