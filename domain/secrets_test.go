package domain_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestRefuseSecrets(t *testing.T) {
	tests := []struct {
		name        string
		field       domain.Field
		wantRefused string // the reason, "" when the field is kept
	}{
		{"PasswordKind", domain.Field{Name: "login", Kind: "password"}, domain.SecretRefusal},
		{"EmailKind", domain.Field{Name: "contact", Kind: "email"}, domain.EmailRefusal},
		{"UnknownKind", domain.Field{Name: "colour", Kind: "color"}, `Parley cannot show a field of type "color".`},
		{"SecretKind", domain.Field{Name: "x", Kind: "api_token"}, domain.SecretRefusal},
		{"PasswordName", domain.Field{Name: "password", Kind: domain.KindText}, domain.SecretRefusal},
		{"PasswordInsideName", domain.Field{Name: "dbpassword", Kind: domain.KindText}, domain.SecretRefusal},
		{"CamelPassword", domain.Field{Name: "newPassword", Kind: domain.KindText}, domain.SecretRefusal},
		{"Passwd", domain.Field{Name: "db_passwd", Kind: domain.KindText}, domain.SecretRefusal},
		{"Passphrase", domain.Field{Name: "key-passphrase", Kind: domain.KindText}, domain.SecretRefusal},
		{"Token", domain.Field{Name: "github_token", Kind: domain.KindText}, domain.SecretRefusal},
		{"Tokens", domain.Field{Name: "tokens", Kind: domain.KindText}, domain.SecretRefusal},
		{"APIKeySnake", domain.Field{Name: "api_key", Kind: domain.KindText}, domain.SecretRefusal},
		{"APIKeyJoined", domain.Field{Name: "APIKEY", Kind: domain.KindText}, domain.SecretRefusal},
		{"APIKeyCamel", domain.Field{Name: "openaiAPIKey", Kind: domain.KindText}, domain.SecretRefusal},
		{"APIKeyKebab", domain.Field{Name: "x-api-key", Kind: domain.KindText}, domain.SecretRefusal},
		{"Secret", domain.Field{Name: "client_secret", Kind: domain.KindText}, domain.SecretRefusal},
		{"Credentials", domain.Field{Name: "aws_credentials", Kind: domain.KindTextarea}, domain.SecretRefusal},
		{"PrivateKey", domain.Field{Name: "private_key", Kind: domain.KindTextarea}, domain.SecretRefusal},
		{"AccessKey", domain.Field{Name: "awsAccessKeyId", Kind: domain.KindText}, domain.SecretRefusal},
		{"SSHKey", domain.Field{Name: "ssh-key", Kind: domain.KindTextarea}, domain.SecretRefusal},
		{"OTP", domain.Field{Name: "otp", Kind: domain.KindText}, domain.SecretRefusal},
		{"OTPCamel", domain.Field{Name: "OTPCode", Kind: domain.KindText}, domain.SecretRefusal},
		{"PinCode", domain.Field{Name: "pin_code", Kind: domain.KindInteger}, domain.SecretRefusal},
		{"Bearer", domain.Field{Name: "bearer", Kind: domain.KindText}, domain.SecretRefusal},
		{"SessionCookie", domain.Field{Name: "session_cookie", Kind: domain.KindText}, domain.SecretRefusal},
		{"SecretLabel", domain.Field{Name: "auth", Label: "Your GitHub personal access token", Kind: domain.KindText}, domain.SecretRefusal},
		{"APIKeyLabel", domain.Field{Name: "k", Label: "API Key", Kind: domain.KindText}, domain.SecretRefusal},

		{"Description", domain.Field{Name: "description", Kind: domain.KindTextarea}, ""},
		{"Keyboard", domain.Field{Name: "keyboard_layout", Kind: domain.KindText}, ""},
		{"Monkey", domain.Field{Name: "monkey", Kind: domain.KindText}, ""},
		{"Pinned", domain.Field{Name: "pinned", Kind: domain.KindBoolean}, ""},
		{"ConfigKey", domain.Field{Name: "config_key", Kind: domain.KindText}, ""},
		{"PublicKeyName", domain.Field{Name: "public_key_name", Kind: domain.KindText}, ""},
		{"Tokenizer", domain.Field{Name: "tokenizer_model", Kind: domain.KindText}, ""},
		{"MaxTokens", domain.Field{Name: "max_tokens", Kind: domain.KindInteger}, ""},
		{"TokenLimit", domain.Field{Name: "tokenLimit", Kind: domain.KindInteger}, ""},
		{"Secretary", domain.Field{Name: "secretary", Kind: domain.KindText}, ""},
		{"Topping", domain.Field{Name: "topping", Kind: domain.KindText}, ""},
		{"EmailAsText", domain.Field{Name: "email", Kind: domain.KindText}, ""},
		{"BranchName", domain.Field{Name: "branch_name", Label: "Branch", Kind: domain.KindText}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep := domain.Field{Name: "keep", Kind: domain.KindText}
			q := domain.Question{Message: "m", Fields: []domain.Field{keep, tt.field}}
			got := domain.RefuseSecrets(q)
			want := q
			if tt.wantRefused != "" {
				want.Fields = []domain.Field{keep}
				want.Refused = []domain.RefusedField{{Name: tt.field.Name, Reason: tt.wantRefused}}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestRefuseSecrets_KeepsEarlierRefusalsAndInput(t *testing.T) {
	earlier := []domain.RefusedField{{Name: "old", Reason: "r"}}
	fields := []domain.Field{{Name: "token", Kind: domain.KindText}}
	q := domain.Question{Fields: fields, Refused: earlier}
	got := domain.RefuseSecrets(q)
	if len(got.Fields) != 0 || got.Fields == nil {
		t.Errorf("got fields %#v, want an empty, non-nil list", got.Fields)
	}
	if want := []domain.RefusedField{earlier[0], {Name: "token", Reason: domain.SecretRefusal}}; !reflect.DeepEqual(got.Refused, want) {
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
		refused []domain.RefusedField
		want    string
	}{
		{"None", nil, ""},
		{"One", []domain.RefusedField{{Name: "api_key", Reason: domain.SecretRefusal}},
			`The field "api_key" was not shown to the person: ` + domain.SecretRefusal},
		{"TwoSameReason", []domain.RefusedField{{Name: "user", Reason: domain.SecretRefusal}, {Name: "pass", Reason: domain.SecretRefusal}},
			`The fields "user" and "pass" were not shown to the person: ` + domain.SecretRefusal},
		{"ThreeAndTwoReasons", []domain.RefusedField{
			{Name: "a", Reason: domain.SecretRefusal}, {Name: "mail", Reason: domain.EmailRefusal},
			{Name: "b", Reason: domain.SecretRefusal}, {Name: "", Reason: domain.SecretRefusal}},
			`The fields "a", "b" and "(unnamed)" were not shown to the person: ` + domain.SecretRefusal +
				` The field "mail" was not shown to the person: ` + domain.EmailRefusal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := domain.Question{Refused: tt.refused}.DeclineReason()
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRefuseSecrets_ParsedMessage(t *testing.T) {
	text := `UserInputMetaData: {"content": "Deploy", "metadata": {"input_fields": [
		{"name": "service", "type": "text"}, {"name": "pw", "type": "password"}, {"name": "notify", "type": "email"}, {"name": "apiToken"}]}}`
	q, ok := domain.ParseUserInputMetaData(text)
	if !ok {
		t.Fatal("parse failed")
	}
	got := domain.RefuseSecrets(q)
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
