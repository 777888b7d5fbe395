package domain

import (
	"strings"
)

// HumanizeName turns a field name such as "pr_title" or "baseBranch" into "Pr title" / "Base branch".
func HumanizeName(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case i > 0 && r >= 'A' && r <= 'Z':
			b.WriteByte(' ')
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteRune(r)
		}
	}
	words := strings.Fields(b.String())
	if len(words) == 0 {
		return name
	}
	for i, w := range words {
		if acronyms[w] {
			words[i] = strings.ToUpper(w)
		}
	}
	s := strings.Join(words, " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// acronyms are written in capitals when a field name is turned into a label.
var acronyms = map[string]bool{"pr": true, "id": true, "url": true, "api": true, "ip": true, "dns": true,
	"sql": true, "ssh": true, "http": true, "https": true, "ui": true, "ci": true, "aws": true, "gcp": true, "cpu": true, "usd": true}

// Title makes a conversation title from its first message: the first line, cut at about 60 characters.
func Title(text string) string {
	line := strings.TrimSpace(text)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = CleanName(line)
	r := []rune(line)
	if len(r) > 60 {
		cut := 60
		for i := 60; i > 30; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		return strings.TrimSpace(string(r[:cut])) + "…"
	}
	if line == "" {
		return "New conversation"
	}
	return line
}

func trimSpace(s string) string { return strings.TrimSpace(s) }

// ValidTitle is a title a person gave a conversation, cleaned as CleanName cleans names;
// EINVALID when it is empty, too long or holds a control character (see TextKind).
func ValidTitle(s string) (string, error) {
	if err := TitleText.CheckChars(s); err != nil {
		return "", err
	}
	s = CleanName(s)
	if s == "" {
		return "", Errorf(EINVALID, "A title cannot be empty.")
	}
	return s, TitleText.Check(s)
}
