package agent_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-chat/parley/agent"
)

// githubPRExample is the example of the format's design note, verbatim.
const githubPRExample = `UserInputMetaData: {
"require_user_input": true,
"content": "To create a GitHub pull request, I need the following information:",
"metadata": {
"user_input": true,
"input_fields": [
{
"name": "branch_name",
"description": "The source branch for the pull request",
"type": "text",
"required": true
},
{
"name": "pr_title",
"description": "Title of the pull request",
"type": "text",
"required": true
},
{
"name": "base_branch",
"description": "Target branch",
"type": "select",
"required": true,
"options": ["main", "develop", "staging"]
}
]
}
}`

var githubPRQuestion = agent.Question{
	Message: "To create a GitHub pull request, I need the following information:",
	Fields: []agent.Field{
		{Name: "branch_name", Description: "The source branch for the pull request", Kind: agent.KindText, Required: true},
		{Name: "pr_title", Description: "Title of the pull request", Kind: agent.KindText, Required: true},
		{Name: "base_branch", Description: "Target branch", Kind: agent.KindSelect, Required: true,
			Options: []agent.Option{{Value: "main"}, {Value: "develop"}, {Value: "staging"}}},
	},
}

// metaMessage wraps input_fields JSON in a complete UserInputMetaData message.
func metaMessage(t *testing.T, fields string) string {
	t.Helper()
	return `UserInputMetaData: {"require_user_input": true, "content": "Need this", "metadata": {"user_input": true, "input_fields": ` + fields + `}}`
}

// oneField is the question metaMessage produces for a single field.
func oneField(f agent.Field) agent.Question {
	return agent.Question{Message: "Need this", Fields: []agent.Field{f}}
}

func TestParseUserInputMetaData(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   agent.Question
		wantOK bool
	}{
		{"GitHubPRExample", githubPRExample, githubPRQuestion, true},
		{"LeadingWhitespace", "\n\n  " + githubPRExample, githubPRQuestion, true},
		{"Fenced", strings.Replace(githubPRExample, "UserInputMetaData: ", "UserInputMetaData:\n```json\n", 1) + "\n```", githubPRQuestion, true},
		{"FencedSameLine", strings.Replace(githubPRExample, "UserInputMetaData: ", "UserInputMetaData: ```", 1) + "```", githubPRQuestion, true},
		{"TrailingText", githubPRExample + "\n\nLet me know once you have filled this in. {not json}", githubPRQuestion, true},
		{"FieldsWithoutMetadataLevel", `UserInputMetaData: {"content": "Need this", "input_fields": [{"name": "x"}]}`,
			oneField(agent.Field{Name: "x", Kind: agent.KindText}), true},
		{"ObjectOptions", metaMessage(t, `[{"name": "size", "type": "select", "options": [{"value": "s", "label": "Small"}, {"value": "m"}, {"label": "Large"}, "xl", 2]}]`),
			oneField(agent.Field{Name: "size", Kind: agent.KindSelect,
				Options: []agent.Option{{Value: "s", Label: "Small"}, {Value: "m"}, {Value: "Large"}, {Value: "xl"}, {Value: "2"}}}), true},
		{"DuplicateAndEmptyOptionsDropped", metaMessage(t, `[{"name": "c", "type": "select", "options": ["a", " a ", "", "b"]}]`),
			oneField(agent.Field{Name: "c", Kind: agent.KindSelect, Options: []agent.Option{{Value: "a"}, {Value: "b"}}}), true},
		{"LabelAndDefault", metaMessage(t, `[{"name": "n", "label": " Count ", "type": "integer", "default": 3, "min": 1, "max": "10"}]`),
			oneField(agent.Field{Name: "n", Label: "Count", Kind: agent.KindInteger, Default: 3.0, Min: new(1.0), Max: new(10.0)}), true},
		{"TextLimits", metaMessage(t, `[{"name": "t", "type": "text", "minLength": 3, "maxLength": 20.0, "pattern": "[a-z]+", "required": "yes"}]`),
			oneField(agent.Field{Name: "t", Kind: agent.KindText, Required: true, MinLength: new(3), MaxLength: new(20), Pattern: "[a-z]+"}), true},
		{"BadLimitsIgnored", metaMessage(t, `[{"name": "t", "minLength": -1, "maxLength": 2.5, "min": "lots", "max": null}]`),
			oneField(agent.Field{Name: "t", Kind: agent.KindText}), true},
		{"Multiselect", metaMessage(t, `[{"name": "tags", "type": "multiselect", "options": ["a", "b", "c"], "minItems": 1, "maxItems": 2, "default": ["a", 1]}]`),
			oneField(agent.Field{Name: "tags", Kind: agent.KindMultiselect, Options: []agent.Option{{Value: "a"}, {Value: "b"}, {Value: "c"}},
				MinItems: new(1), MaxItems: new(2), Default: []string{"a", "1"}}), true},
		{"NonTextLabelIgnored", metaMessage(t, `[{"name": "a", "label": 5, "description": ["x"], "pattern": false}]`),
			oneField(agent.Field{Name: "a", Kind: agent.KindText}), true},
		{"Date", metaMessage(t, `[{"name": "when", "type": "date"}]`), oneField(agent.Field{Name: "when", Kind: agent.KindDate}), true},
		{"BooleanDefault", metaMessage(t, `[{"name": "now", "type": "boolean", "default": false}]`),
			oneField(agent.Field{Name: "now", Kind: agent.KindBoolean, Default: false}), true},
		{"TypeCaseAndAlias", metaMessage(t, `[{"name": "a", "type": " TextArea "}, {"name": "b", "type": "dropdown", "options": ["x"]}, {"name": "c", "type": "bool"}]`),
			agent.Question{Message: "Need this", Fields: []agent.Field{
				{Name: "a", Kind: agent.KindTextarea},
				{Name: "b", Kind: agent.KindSelect, Options: []agent.Option{{Value: "x"}}},
				{Name: "c", Kind: agent.KindBoolean},
			}}, true},
		{"UnknownTypeIsText", metaMessage(t, `[{"name": "a", "type": "color"}, {"name": "b", "type": 7}, {"name": "c"}]`),
			agent.Question{Message: "Need this", Fields: []agent.Field{
				{Name: "a", Kind: agent.KindText}, {Name: "b", Kind: agent.KindText}, {Name: "c", Kind: agent.KindText},
			}}, true},
		{"SelectWithoutOptionsIsText", metaMessage(t, `[{"name": "a", "type": "select"}]`), oneField(agent.Field{Name: "a", Kind: agent.KindText}), true},
		{"PasswordAndEmailKeptRaw", metaMessage(t, `[{"name": "p", "type": "password"}, {"name": "e", "type": "email"}]`),
			agent.Question{Message: "Need this", Fields: []agent.Field{
				{Name: "p", Kind: agent.FieldKind("password")}, {Name: "e", Kind: agent.FieldKind("email")},
			}}, true},
		{"Unicode", metaMessage(t, `[{"name": "städte", "label": "Städte 🏙", "type": "text"}]`),
			oneField(agent.Field{Name: "städte", Label: "Städte 🏙", Kind: agent.KindText}), true},
		{"PrefixAnyCase", strings.Replace(githubPRExample, "UserInputMetaData", "userinputmetadata", 1), githubPRQuestion, true},

		{"NoPrefix", strings.TrimPrefix(githubPRExample, "UserInputMetaData: "), agent.Question{}, false},
		{"PrefixNotAtStart", "Sure! " + githubPRExample, agent.Question{}, false},
		{"PlainText", "The build passed.", agent.Question{}, false},
		{"Empty", "", agent.Question{}, false},
		{"PrefixOnly", "UserInputMetaData:", agent.Question{}, false},
		{"BadJSON", `UserInputMetaData: {"content": "x", "metadata": {"input_fields": [{"name": "a"]}}`, agent.Question{}, false},
		{"NotAnObject", `UserInputMetaData: [{"name": "a"}]`, agent.Question{}, false},
		{"NoInputFields", `UserInputMetaData: {"require_user_input": true, "content": "x", "metadata": {"user_input": true}}`, agent.Question{}, false},
		{"EmptyInputFields", metaMessage(t, `[]`), agent.Question{}, false},
		{"InputFieldsNotAList", metaMessage(t, `{"name": "a"}`), agent.Question{}, false},
		{"FieldWithoutName", metaMessage(t, `[{"name": "a"}, {"type": "text"}]`), agent.Question{}, false},
		{"FieldWithBlankName", metaMessage(t, `[{"name": "  "}]`), agent.Question{}, false},
		{"DuplicateNames", metaMessage(t, `[{"name": "a"}, {"name": " a"}]`), agent.Question{}, false},
		{"MinAboveMax", metaMessage(t, `[{"name": "a", "type": "number", "min": 5, "max": 1}]`), agent.Question{}, false},
		{"RequireUserInputFalse", strings.Replace(githubPRExample, `"require_user_input": true`, `"require_user_input": false`, 1), agent.Question{}, false},
		{"RequireUserInputFalseString", strings.Replace(githubPRExample, `"require_user_input": true`, `"require_user_input": "false"`, 1), agent.Question{}, false},
		{"ContentNotAString", strings.Replace(githubPRExample, `"content": "To create`, `"content": 5, "x": "`, 1),
			agent.Question{Fields: githubPRQuestion.Fields}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := agent.ParseUserInputMetaData(tt.text)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestFormatUserInputMetaData(t *testing.T) {
	tests := []struct {
		name string
		q    agent.Question
	}{
		{"GitHubPR", githubPRQuestion},
		{"EveryKindAndLimit", agent.Question{Message: "Plan the <offsite> & more", Fields: []agent.Field{
			{Name: "title", Label: "Title", Description: "Short", Kind: agent.KindText, Required: true, MinLength: new(3), MaxLength: new(80), Pattern: `[A-Z].*`, Default: "Offsite"},
			{Name: "notes", Kind: agent.KindTextarea},
			{Name: "budget", Kind: agent.KindNumber, Min: new(0.5), Max: new(1e6), Default: 1200.5},
			{Name: "people", Kind: agent.KindInteger, Min: new(1.0), Default: 12.0},
			{Name: "venue", Kind: agent.KindSelect, Required: true, Options: []agent.Option{{Value: "pike", Label: "Pike Loft — capacity 40"}, {Value: "dock"}}},
			{Name: "extras", Kind: agent.KindMultiselect, Options: []agent.Option{{Value: "av"}, {Value: "food"}}, MinItems: new(0), MaxItems: new(2), Default: []string{"food"}},
			{Name: "confirm", Kind: agent.KindBoolean, Default: true},
			{Name: "day", Kind: agent.KindDate, Default: "2026-03-01"},
		}}},
		{"RawSecretKinds", agent.Question{Message: "x", Fields: []agent.Field{{Name: "p", Kind: agent.FieldKind("password")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := agent.FormatUserInputMetaData(tt.q)
			if !strings.HasPrefix(text, "UserInputMetaData: {") || !strings.Contains(text, `"require_user_input": true`) {
				t.Errorf("got %q, want the UserInputMetaData prefix and require_user_input", text)
			}
			got, ok := agent.ParseUserInputMetaData(text)
			if !ok {
				t.Fatalf("ParseUserInputMetaData(%q) failed", text)
			}
			if !reflect.DeepEqual(got, tt.q) {
				t.Errorf("round trip:\ngot  %#v\nwant %#v", got, tt.q)
			}
		})
	}
}

func FuzzParseUserInputMetaData(f *testing.F) {
	f.Add(githubPRExample)
	f.Add("UserInputMetaData:\n```json\n" + strings.TrimPrefix(githubPRExample, "UserInputMetaData: ") + "\n```\nThanks!")
	f.Add(githubPRExample + " and some trailing text")
	f.Add(`UserInputMetaData: {"content": "x", "metadata": {"input_fields": [{"name": "a"]}}`)
	f.Add("")
	f.Add("UserInputMetaData:")
	f.Add(`UserInputMetaData: {"content": "Wähle 🌍", "metadata": {"input_fields": [{"name": "ort", "label": "Ört\u00e9 \ud800", "type": "multiselect", "options": ["è", {"value": "日本", "label": "Japan"}], "default": ["日本"], "maxItems": 1e400}]}}`)
	f.Add(`UserInputMetaData: {"input_fields": [{"name": "n", "type": "number", "min": "1", "max": 2, "default": 1.50}, {"name": "p", "type": "password"}, {"name": "api_key"}]}`)
	f.Add("UserInputMetaData: {\"input_fields\": [{\"name\": \"\xff\xfe\"}]}")
	f.Fuzz(func(t *testing.T, text string) {
		q, ok := agent.ParseUserInputMetaData(text)
		if !ok {
			return
		}
		if len(q.Fields) == 0 {
			t.Fatalf("ok with no fields: %q", text)
		}
		for _, f := range q.Fields {
			if strings.TrimSpace(f.Name) == "" {
				t.Errorf("field without a name: %#v", f)
			}
			if !f.Kind.Valid() && f.Kind != "password" && f.Kind != "email" {
				t.Errorf("field %q has kind %q, want a valid kind", f.Name, f.Kind)
			}
			_ = agent.FieldDefault(f)
		}
		safe := agent.RefuseSecrets(q)
		if err := safe.Check(); err != nil {
			t.Errorf("Check after RefuseSecrets: %v", err)
		}
		_, _ = agent.Validate(safe, url.Values{})
		again, ok := agent.ParseUserInputMetaData(agent.FormatUserInputMetaData(q))
		if !ok || !reflect.DeepEqual(again, q) {
			t.Errorf("round trip:\ngot  %#v (ok %v)\nwant %#v", again, ok, q)
		}
	})
}
