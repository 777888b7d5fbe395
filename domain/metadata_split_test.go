package domain_test

import (
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestSplitUserInputMetaData(t *testing.T) {
	form := `UserInputMetaData: {"require_user_input": true, "content": "Need a branch", "metadata": {"input_fields": [{"name": "branch", "type": "text", "required": true}]}}`
	tests := []struct {
		name, text, before, after string
		ok                        bool
	}{
		{"alone", form, "", "", true},
		{"text after", form + "\n\nI will wait for your answer.", "", "I will wait for your answer.", true},
		{"text before", "Sure, I can do that.\n\n" + form, "Sure, I can do that.", "", true},
		{"lower case prefix", "userinputmetadata: " + form[len("UserInputMetaData: "):], "", "", true},
		{"fenced with text after", "UserInputMetaData: ```json\n" + form[len("UserInputMetaData: "):] + "\n```\nThanks!", "", "Thanks!", true},
		{"prefix mid-line is prose", "You could answer with UserInputMetaData: {} here", "", "", false},
		{"bad json", "UserInputMetaData: {nope", "", "", false},
		{"no prefix", "Hello", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, before, after, ok := domain.SplitUserInputMetaData(tt.text)
			if ok != tt.ok || before != tt.before || after != tt.after {
				t.Fatalf("got (%v, %q, %q), want (%v, %q, %q)", ok, before, after, tt.ok, tt.before, tt.after)
			}
			if ok && (len(q.Fields) != 1 || q.Fields[0].Name != "branch" || q.Message != "Need a branch") {
				t.Fatalf("question = %+v", q)
			}
		})
	}
}

func TestOpensUserInputMetaData(t *testing.T) {
	for text, want := range map[string][2]bool{"": {false, true}, "User": {false, true}, "userinputmeta": {false, true},
		"UserInputMetaData: {": {true, false}, "userinputmetadata:": {true, false}, "Use the": {false, false}, "Hello": {false, false}} {
		if opens, may := domain.OpensUserInputMetaData(text); opens != want[0] || may != want[1] {
			t.Errorf("OpensUserInputMetaData(%q) = %v, %v, want %v", text, opens, may, want)
		}
	}
}

// Where a form opens a line: after the line's blanks, never across a line end, in any case;
// a mention mid-line is prose. Many blank lines are read once each (BenchmarkWriter_Token
// in backend/a2a measures the streaming side).
func TestUserInputMetaDataIndex(t *testing.T) {
	for text, want := range map[string]int{
		"UserInputMetaData: {}": 0, " \t userinputmetadata:": 3, "Hi\n\n  UserInputMetaData:": 6,
		"Say UserInputMetaData: here": -1, "\u00a0UserInputMetaData:": 2, strings.Repeat("\n", 50000) + "UserInputMetaData:": 50000,
	} {
		if got := domain.UserInputMetaDataIndex(text, 0); got != want {
			t.Errorf("UserInputMetaDataIndex(%.40q) = %d, want %d", text, got, want)
		}
	}
}

func FuzzSplitUserInputMetaData(f *testing.F) {
	form := `UserInputMetaData: {"require_user_input": true, "content": "x", "metadata": {"input_fields": [{"name": "a", "type": "text"}]}}`
	for _, s := range []string{form, "Hi\n" + form + "\nbye", "userinputmetadata: ```json\n{}\n```", "UserInputMetaData:", "\n\n", "text UserInputMetaData: {"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q, before, after, ok := domain.SplitUserInputMetaData(text)
		if !ok {
			return
		}
		if len(q.Fields) == 0 {
			t.Fatalf("ok with no fields for %q", text)
		}
		if len(before)+len(after) > len(text) {
			t.Fatalf("split grew the text: %q / %q from %q", before, after, text)
		}
	})
}
