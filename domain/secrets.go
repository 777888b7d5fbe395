package domain

import (
	"fmt"
	"strings"
	"unicode"
)

// The reasons a field is refused, shown to the person and sent to the agent.
const (
	SecretRefusal = "Parley never collects passwords, tokens or other secrets through a form; use the service's own sign-in instead."
	EmailRefusal  = "Parley does not collect email addresses through a form."
)

// secretWords are words that name a secret on their own (plurals are matched too).
var secretWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "passcode": true,
	"token": true, "secret": true, "credential": true, "bearer": true,
	"apikey": true, "privatekey": true, "accesskey": true, "sshkey": true, "secretkey": true,
	"otp": true, "totp": true, "pincode": true, "cvv": true, "cvc": true,
}

// secretPairs are two words that name a secret together, such as "api key".
var secretPairs = map[[2]string]bool{
	{"api", "key"}: true, {"private", "key"}: true, {"access", "key"}: true, {"ssh", "key"}: true,
	{"pin", "code"}: true, {"pin", "number"}: true, {"session", "cookie"}: true, {"auth", "cookie"}: true,
}

// quantityWords next to "token" mean a count of model tokens ("max_tokens"), not a credential.
var quantityWords = map[string]bool{
	"max": true, "min": true, "count": true, "limit": true, "budget": true,
	"usage": true, "number": true, "num": true, "per": true, "total": true,
}

// RefuseSecrets removes the fields Parley will not render: password and email inputs,
// fields whose name or label names a secret, and kinds Parley does not know. They are
// listed in q.Refused with the reason, so that the person sees what was left out and the
// agent learns why (see DeclineReason).
func RefuseSecrets(q Question) Question {
	var fields []Field
	var refused []RefusedField
	for _, f := range q.Fields {
		if reason := Refusal(f); reason != "" {
			refused = append(refused, RefusedField{Name: f.Name, Reason: reason})
			continue
		}
		fields = append(fields, f)
	}
	if len(refused) == 0 {
		return q
	}
	if fields == nil {
		fields = []Field{}
	}
	q.Fields = fields
	q.Refused = append(append([]RefusedField(nil), q.Refused...), refused...)
	return q
}

// Refusal returns why f must not be rendered, or "": the rule RefuseSecrets applies to
// each field, for adapters that decide field by field.
func Refusal(f Field) string {
	switch {
	case f.Kind == kindEmail:
		return EmailRefusal
	case f.Kind == kindPassword || looksSecret(f.Name) || looksSecret(f.Label):
		return SecretRefusal
	case !f.Kind.Valid():
		if looksSecret(string(f.Kind)) {
			return SecretRefusal
		}
		return fmt.Sprintf("Parley cannot show a field of type %q.", f.Kind)
	}
	return ""
}

// looksSecret reports whether a field name or label names a secret: "api_key", "apiKey",
// "GitHub token", "newPassword"; but not "tokenizer_model", "max_tokens", "keyboard".
func looksSecret(s string) bool {
	lower := strings.ToLower(s)
	if strings.Contains(lower, "password") || strings.Contains(lower, "passwd") || strings.Contains(lower, "passphrase") {
		return true
	}
	words := splitWords(s)
	counting := false
	for _, w := range words {
		counting = counting || quantityWords[w]
	}
	for i, w := range words {
		w = strings.TrimSuffix(w, "s")
		if secretWords[w] && !(w == "token" && counting) {
			return true
		}
		if i > 0 && secretPairs[[2]string{words[i-1], w}] {
			return true
		}
	}
	return false
}

// splitWords lowercases s and splits it on anything but letters and digits, and on
// camelCase boundaries ("APIKey" is "api", "key").
func splitWords(s string) []string {
	rs := []rune(s)
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			words = append(words, strings.ToLower(string(rs[start:end])))
			start = -1
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			acronymEnd := unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || acronymEnd {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return words
}

// DeclineReason is what the agent is told about the fields Parley removed from its
// question, naming them and saying why; "" when none were removed.
func (q Question) DeclineReason() string {
	var reasons []string
	names := map[string][]string{}
	for _, r := range q.Refused {
		if _, seen := names[r.Reason]; !seen {
			reasons = append(reasons, r.Reason)
		}
		name := r.Name
		if strings.TrimSpace(name) == "" {
			name = "(unnamed)"
		}
		names[r.Reason] = append(names[r.Reason], fmt.Sprintf("%q", name))
	}
	parts := make([]string, 0, len(reasons))
	for _, reason := range reasons {
		list := names[reason]
		subject := "The field " + list[0] + " was"
		if len(list) > 1 {
			subject = "The fields " + strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1] + " were"
		}
		parts = append(parts, subject+" not shown to the person: "+reason)
	}
	return strings.Join(parts, " ")
}
