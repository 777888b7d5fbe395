package domain_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
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

var githubPRQuestion = domain.Question{
	Message: "To create a GitHub pull request, I need the following information:",
	Fields: []domain.Field{
		{Name: "branch_name", Description: "The source branch for the pull request", Kind: domain.KindText, Required: true},
		{Name: "pr_title", Description: "Title of the pull request", Kind: domain.KindText, Required: true},
		{Name: "base_branch", Description: "Target branch", Kind: domain.KindSelect, Required: true,
			Options: []domain.Option{{Value: "main"}, {Value: "develop"}, {Value: "staging"}}},
	},
}

// metaMessage wraps input_fields JSON in a complete UserInputMetaData message.
func metaMessage(t *testing.T, fields string) string {
	t.Helper()
	return `UserInputMetaData: {"require_user_input": true, "content": "Need this", "metadata": {"user_input": true, "input_fields": ` + fields + `}}`
}

// oneField is the question metaMessage produces for a single field.
func oneField(f domain.Field) domain.Question {
	return domain.Question{Message: "Need this", Fields: []domain.Field{f}}
}

func TestParseUserInputMetaData(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   domain.Question
		wantOK bool
	}{
		{"GitHubPRExample", githubPRExample, githubPRQuestion, true},
		{"LeadingWhitespace", "\n\n  " + githubPRExample, githubPRQuestion, true},
		{"Fenced", strings.Replace(githubPRExample, "UserInputMetaData: ", "UserInputMetaData:\n```json\n", 1) + "\n```", githubPRQuestion, true},
		{"FencedSameLine", strings.Replace(githubPRExample, "UserInputMetaData: ", "UserInputMetaData: ```", 1) + "```", githubPRQuestion, true},
		{"TrailingText", githubPRExample + "\n\nLet me know once you have filled this in. {not json}", githubPRQuestion, true},
		{"FieldsWithoutMetadataLevel", `UserInputMetaData: {"content": "Need this", "input_fields": [{"name": "x"}]}`,
			oneField(domain.Field{Name: "x", Kind: domain.KindText}), true},
		{"ObjectOptions", metaMessage(t, `[{"name": "size", "type": "select", "options": [{"value": "s", "label": "Small"}, {"value": "m"}, {"label": "Large"}, "xl", 2]}]`),
			oneField(domain.Field{Name: "size", Kind: domain.KindSelect,
				Options: []domain.Option{{Value: "s", Label: "Small"}, {Value: "m"}, {Value: "Large"}, {Value: "xl"}, {Value: "2"}}}), true},
		{"DuplicateAndEmptyOptionsDropped", metaMessage(t, `[{"name": "c", "type": "select", "options": ["a", " a ", "", "b"]}]`),
			oneField(domain.Field{Name: "c", Kind: domain.KindSelect, Options: []domain.Option{{Value: "a"}, {Value: "b"}}}), true},
		{"LabelAndDefault", metaMessage(t, `[{"name": "n", "label": " Count ", "type": "integer", "default": 3, "min": 1, "max": "10"}]`),
			oneField(domain.Field{Name: "n", Label: "Count", Kind: domain.KindInteger, Default: 3.0, Min: new(1.0), Max: new(10.0)}), true},
		{"TextLimits", metaMessage(t, `[{"name": "t", "type": "text", "minLength": 3, "maxLength": 20.0, "pattern": "[a-z]+", "required": "yes"}]`),
			oneField(domain.Field{Name: "t", Kind: domain.KindText, Required: true, MinLength: new(3), MaxLength: new(20), Pattern: "[a-z]+"}), true},
		{"BadLimitsIgnored", metaMessage(t, `[{"name": "t", "minLength": -1, "maxLength": 2.5, "min": "lots", "max": null}]`),
			oneField(domain.Field{Name: "t", Kind: domain.KindText}), true},
		{"Multiselect", metaMessage(t, `[{"name": "tags", "type": "multiselect", "options": ["a", "b", "c"], "minItems": 1, "maxItems": 2, "default": ["a", 1]}]`),
			oneField(domain.Field{Name: "tags", Kind: domain.KindMultiselect, Options: []domain.Option{{Value: "a"}, {Value: "b"}, {Value: "c"}},
				MinItems: new(1), MaxItems: new(2), Default: []string{"a", "1"}}), true},
		{"NonTextLabelIgnored", metaMessage(t, `[{"name": "a", "label": 5, "description": ["x"], "pattern": false}]`),
			oneField(domain.Field{Name: "a", Kind: domain.KindText}), true},
		{"Date", metaMessage(t, `[{"name": "when", "type": "date"}]`), oneField(domain.Field{Name: "when", Kind: domain.KindDate}), true},
		{"BooleanDefault", metaMessage(t, `[{"name": "now", "type": "boolean", "default": false}]`),
			oneField(domain.Field{Name: "now", Kind: domain.KindBoolean, Default: false}), true},
		{"TypeCaseAndAlias", metaMessage(t, `[{"name": "a", "type": " TextArea "}, {"name": "b", "type": "dropdown", "options": ["x"]}, {"name": "c", "type": "bool"}]`),
			domain.Question{Message: "Need this", Fields: []domain.Field{
				{Name: "a", Kind: domain.KindTextarea},
				{Name: "b", Kind: domain.KindSelect, Options: []domain.Option{{Value: "x"}}},
				{Name: "c", Kind: domain.KindBoolean},
			}}, true},
		{"UnknownTypeIsText", metaMessage(t, `[{"name": "a", "type": "color"}, {"name": "b", "type": 7}, {"name": "c"}]`),
			domain.Question{Message: "Need this", Fields: []domain.Field{
				{Name: "a", Kind: domain.KindText}, {Name: "b", Kind: domain.KindText}, {Name: "c", Kind: domain.KindText},
			}}, true},
		{"SelectWithoutOptionsIsText", metaMessage(t, `[{"name": "a", "type": "select"}]`), oneField(domain.Field{Name: "a", Kind: domain.KindText}), true},
		{"PasswordAndEmailKeptRaw", metaMessage(t, `[{"name": "p", "type": "password"}, {"name": "e", "type": "email"}]`),
			domain.Question{Message: "Need this", Fields: []domain.Field{
				{Name: "p", Kind: domain.FieldKind("password")}, {Name: "e", Kind: domain.FieldKind("email")},
			}}, true},
		{"Unicode", metaMessage(t, `[{"name": "städte", "label": "Städte 🏙", "type": "text"}]`),
			oneField(domain.Field{Name: "städte", Label: "Städte 🏙", Kind: domain.KindText}), true},
		{"PrefixAnyCase", strings.Replace(githubPRExample, "UserInputMetaData", "userinputmetadata", 1), githubPRQuestion, true},

		{"NoPrefix", strings.TrimPrefix(githubPRExample, "UserInputMetaData: "), domain.Question{}, false},
		{"PrefixNotAtStart", "Sure! " + githubPRExample, domain.Question{}, false},
		{"PlainText", "The build passed.", domain.Question{}, false},
		{"Empty", "", domain.Question{}, false},
		{"PrefixOnly", "UserInputMetaData:", domain.Question{}, false},
		{"BadJSON", `UserInputMetaData: {"content": "x", "metadata": {"input_fields": [{"name": "a"]}}`, domain.Question{}, false},
		{"NotAnObject", `UserInputMetaData: [{"name": "a"}]`, domain.Question{}, false},
		{"NoInputFields", `UserInputMetaData: {"require_user_input": true, "content": "x", "metadata": {"user_input": true}}`, domain.Question{}, false},
		{"EmptyInputFields", metaMessage(t, `[]`), domain.Question{}, false},
		{"InputFieldsNotAList", metaMessage(t, `{"name": "a"}`), domain.Question{}, false},
		{"FieldWithoutName", metaMessage(t, `[{"name": "a"}, {"type": "text"}]`), domain.Question{}, false},
		{"FieldWithBlankName", metaMessage(t, `[{"name": "  "}]`), domain.Question{}, false},
		{"DuplicateNames", metaMessage(t, `[{"name": "a"}, {"name": " a"}]`), domain.Question{}, false},
		{"MinAboveMax", metaMessage(t, `[{"name": "a", "type": "number", "min": 5, "max": 1}]`), domain.Question{}, false},
		{"RequireUserInputFalse", strings.Replace(githubPRExample, `"require_user_input": true`, `"require_user_input": false`, 1), domain.Question{}, false},
		{"RequireUserInputFalseString", strings.Replace(githubPRExample, `"require_user_input": true`, `"require_user_input": "false"`, 1), domain.Question{}, false},
		{"ContentNotAString", strings.Replace(githubPRExample, `"content": "To create`, `"content": 5, "x": "`, 1),
			domain.Question{Fields: githubPRQuestion.Fields}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := domain.ParseUserInputMetaData(tt.text)
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
		q    domain.Question
	}{
		{"GitHubPR", githubPRQuestion},
		{"EveryKindAndLimit", domain.Question{Message: "Plan the <offsite> & more", Fields: []domain.Field{
			{Name: "title", Label: "Title", Description: "Short", Kind: domain.KindText, Required: true, MinLength: new(3), MaxLength: new(80), Pattern: `[A-Z].*`, Default: "Offsite"},
			{Name: "notes", Kind: domain.KindTextarea},
			{Name: "budget", Kind: domain.KindNumber, Min: new(0.5), Max: new(1e6), Default: 1200.5},
			{Name: "people", Kind: domain.KindInteger, Min: new(1.0), Default: 12.0},
			{Name: "venue", Kind: domain.KindSelect, Required: true, Options: []domain.Option{{Value: "pike", Label: "Pike Loft — capacity 40"}, {Value: "dock"}}},
			{Name: "extras", Kind: domain.KindMultiselect, Options: []domain.Option{{Value: "av"}, {Value: "food"}}, MinItems: new(0), MaxItems: new(2), Default: []string{"food"}},
			{Name: "confirm", Kind: domain.KindBoolean, Default: true},
			{Name: "day", Kind: domain.KindDate, Default: "2026-03-01"},
		}}},
		{"RawSecretKinds", domain.Question{Message: "x", Fields: []domain.Field{{Name: "p", Kind: domain.FieldKind("password")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := domain.FormatUserInputMetaData(tt.q)
			if !strings.HasPrefix(text, "UserInputMetaData: {") || !strings.Contains(text, `"require_user_input": true`) {
				t.Errorf("got %q, want the UserInputMetaData prefix and require_user_input", text)
			}
			got, ok := domain.ParseUserInputMetaData(text)
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
		q, ok := domain.ParseUserInputMetaData(text)
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
			_ = domain.FieldDefault(f)
		}
		safe := domain.RefuseSecrets(q)
		if err := safe.Check(); err != nil {
			t.Errorf("Check after RefuseSecrets: %v", err)
		}
		_, _ = domain.Validate(safe, url.Values{})
		again, ok := domain.ParseUserInputMetaData(domain.FormatUserInputMetaData(q))
		if !ok || !reflect.DeepEqual(again, q) {
			t.Errorf("round trip:\ngot  %#v (ok %v)\nwant %#v", again, ok, q)
		}
	})
}
