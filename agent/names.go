package agent

import "strings"

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
	s := strings.Join(strings.Fields(b.String()), " ")
	if s == "" {
		return name
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Title makes a conversation title from its first message: the first line, cut at about 60 characters.
func Title(text string) string {
	line := strings.TrimSpace(text)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
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
