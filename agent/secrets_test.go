package agent_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parley-chat/parley/agent"
)

func TestRefuseSecrets(t *testing.T) {
	tests := []struct {
		name        string
		field       agent.Field
		wantRefused string // the reason, "" when the field is kept
	}{
		{"PasswordKind", agent.Field{Name: "login", Kind: "password"}, agent.SecretRefusal},
		{"EmailKind", agent.Field{Name: "contact", Kind: "email"}, agent.EmailRefusal},
		{"UnknownKind", agent.Field{Name: "colour", Kind: "color"}, `Parley cannot show a field of type "color".`},
		{"SecretKind", agent.Field{Name: "x", Kind: "api_token"}, agent.SecretRefusal},
		{"PasswordName", agent.Field{Name: "password", Kind: agent.KindText}, agent.SecretRefusal},
		{"PasswordInsideName", agent.Field{Name: "dbpassword", Kind: agent.KindText}, agent.SecretRefusal},
		{"CamelPassword", agent.Field{Name: "newPassword", Kind: agent.KindText}, agent.SecretRefusal},
		{"Passwd", agent.Field{Name: "db_passwd", Kind: agent.KindText}, agent.SecretRefusal},
		{"Passphrase", agent.Field{Name: "key-passphrase", Kind: agent.KindText}, agent.SecretRefusal},
		{"Token", agent.Field{Name: "github_token", Kind: agent.KindText}, agent.SecretRefusal},
		{"Tokens", agent.Field{Name: "tokens", Kind: agent.KindText}, agent.SecretRefusal},
		{"APIKeySnake", agent.Field{Name: "api_key", Kind: agent.KindText}, agent.SecretRefusal},
		{"APIKeyJoined", agent.Field{Name: "APIKEY", Kind: agent.KindText}, agent.SecretRefusal},
		{"APIKeyCamel", agent.Field{Name: "openaiAPIKey", Kind: agent.KindText}, agent.SecretRefusal},
		{"APIKeyKebab", agent.Field{Name: "x-api-key", Kind: agent.KindText}, agent.SecretRefusal},
		{"Secret", agent.Field{Name: "client_secret", Kind: agent.KindText}, agent.SecretRefusal},
		{"Credentials", agent.Field{Name: "aws_credentials", Kind: agent.KindTextarea}, agent.SecretRefusal},
		{"PrivateKey", agent.Field{Name: "private_key", Kind: agent.KindTextarea}, agent.SecretRefusal},
		{"AccessKey", agent.Field{Name: "awsAccessKeyId", Kind: agent.KindText}, agent.SecretRefusal},
		{"SSHKey", agent.Field{Name: "ssh-key", Kind: agent.KindTextarea}, agent.SecretRefusal},
		{"OTP", agent.Field{Name: "otp", Kind: agent.KindText}, agent.SecretRefusal},
		{"OTPCamel", agent.Field{Name: "OTPCode", Kind: agent.KindText}, agent.SecretRefusal},
		{"PinCode", agent.Field{Name: "pin_code", Kind: agent.KindInteger}, agent.SecretRefusal},
		{"Bearer", agent.Field{Name: "bearer", Kind: agent.KindText}, agent.SecretRefusal},
		{"SessionCookie", agent.Field{Name: "session_cookie", Kind: agent.KindText}, agent.SecretRefusal},
		{"SecretLabel", agent.Field{Name: "auth", Label: "Your GitHub personal access token", Kind: agent.KindText}, agent.SecretRefusal},
		{"APIKeyLabel", agent.Field{Name: "k", Label: "API Key", Kind: agent.KindText}, agent.SecretRefusal},

		{"Description", agent.Field{Name: "description", Kind: agent.KindTextarea}, ""},
		{"Keyboard", agent.Field{Name: "keyboard_layout", Kind: agent.KindText}, ""},
		{"Monkey", agent.Field{Name: "monkey", Kind: agent.KindText}, ""},
		{"Pinned", agent.Field{Name: "pinned", Kind: agent.KindBoolean}, ""},
		{"ConfigKey", agent.Field{Name: "config_key", Kind: agent.KindText}, ""},
		{"PublicKeyName", agent.Field{Name: "public_key_name", Kind: agent.KindText}, ""},
		{"Tokenizer", agent.Field{Name: "tokenizer_model", Kind: agent.KindText}, ""},
		{"MaxTokens", agent.Field{Name: "max_tokens", Kind: agent.KindInteger}, ""},
		{"TokenLimit", agent.Field{Name: "tokenLimit", Kind: agent.KindInteger}, ""},
		{"Secretary", agent.Field{Name: "secretary", Kind: agent.KindText}, ""},
		{"Topping", agent.Field{Name: "topping", Kind: agent.KindText}, ""},
		{"EmailAsText", agent.Field{Name: "email", Kind: agent.KindText}, ""},
		{"BranchName", agent.Field{Name: "branch_name", Label: "Branch", Kind: agent.KindText}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep := agent.Field{Name: "keep", Kind: agent.KindText}
			q := agent.Question{Message: "m", Fields: []agent.Field{keep, tt.field}}
			got := agent.RefuseSecrets(q)
			want := q
			if tt.wantRefused != "" {
				want.Fields = []agent.Field{keep}
				want.Refused = []agent.RefusedField{{Name: tt.field.Name, Reason: tt.wantRefused}}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestRefuseSecrets_KeepsEarlierRefusalsAndInput(t *testing.T) {
	earlier := []agent.RefusedField{{Name: "old", Reason: "r"}}
	fields := []agent.Field{{Name: "token", Kind: agent.KindText}}
	q := agent.Question{Fields: fields, Refused: earlier}
	got := agent.RefuseSecrets(q)
	if len(got.Fields) != 0 || got.Fields == nil {
		t.Errorf("got fields %#v, want an empty, non-nil list", got.Fields)
	}
	if want := []agent.RefusedField{earlier[0], {Name: "token", Reason: agent.SecretRefusal}}; !reflect.DeepEqual(got.Refused, want) {
		t.Errorf("got refused %#v, want %#v", got.Refused, want)
	}
	if len(q.Refused) != 1 || q.Fields[0].Name != "token" {
		t.Errorf("input question changed: %#v", q)
	}
	if err := got.Check(); err != nil {
		t.Errorf("got Check() = %v, want nil for a question whose fields were all refused", err)
	}
}

func TestQuestion_DeclineReason(t *testing.T) {
	tests := []struct {
		name    string
		refused []agent.RefusedField
		want    string
	}{
		{"None", nil, ""},
		{"One", []agent.RefusedField{{Name: "api_key", Reason: agent.SecretRefusal}},
			`The field "api_key" was not shown to the person: ` + agent.SecretRefusal},
		{"TwoSameReason", []agent.RefusedField{{Name: "user", Reason: agent.SecretRefusal}, {Name: "pass", Reason: agent.SecretRefusal}},
			`The fields "user" and "pass" were not shown to the person: ` + agent.SecretRefusal},
		{"ThreeAndTwoReasons", []agent.RefusedField{
			{Name: "a", Reason: agent.SecretRefusal}, {Name: "mail", Reason: agent.EmailRefusal},
			{Name: "b", Reason: agent.SecretRefusal}, {Name: "", Reason: agent.SecretRefusal}},
			`The fields "a", "b" and "(unnamed)" were not shown to the person: ` + agent.SecretRefusal +
				` The field "mail" was not shown to the person: ` + agent.EmailRefusal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := agent.Question{Refused: tt.refused}.DeclineReason()
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRefuseSecrets_ParsedMessage(t *testing.T) {
	text := `UserInputMetaData: {"content": "Deploy", "metadata": {"input_fields": [
		{"name": "service", "type": "text"}, {"name": "pw", "type": "password"}, {"name": "notify", "type": "email"}, {"name": "apiToken"}]}}`
	q, ok := agent.ParseUserInputMetaData(text)
	if !ok {
		t.Fatal("parse failed")
	}
	got := agent.RefuseSecrets(q)
	if len(got.Fields) != 1 || got.Fields[0].Name != "service" {
		t.Errorf("got fields %#v, want only service", got.Fields)
	}
	reason := got.DeclineReason()
	for _, want := range []string{`"pw"`, `"apiToken"`, `"notify"`, "email addresses"} {
		if !strings.Contains(reason, want) {
			t.Errorf("got reason %q, want it to mention %s", reason, want)
		}
	}
}
