package intake

import (
	"strings"
	"unicode/utf8"
)

// requestWords mark a sentence that asks for something, in the languages people write to
// us in most; a question mark does too.
var requestWords = []string{
	"please", "could you", "can you", "would you", "will you", "i need", "we need", "i want",
	"we want", "i'd like", "i would like", "we would like", "help me", "let me know",
	"bitte", "kannst du", "könntest du", "können sie", "könnten sie", "ich möchte",
	"ich brauche", "wir brauchen", "s'il vous plaît", "s'il te plaît", "pouvez-vous",
	"pourriez-vous", "peux-tu", "je voudrais", "por favor", "puedes", "podrías", "necesito",
	"请", "帮我", "能否", "お願い", "ください",
}

// imperatives open a sentence that asks for something.
var imperatives = map[string]bool{
	"implement": true, "write": true, "fix": true, "add": true, "create": true, "explain": true,
	"review": true, "make": true, "build": true, "update": true, "find": true, "tell": true,
	"show": true, "generate": true, "summarize": true, "summarise": true, "describe": true,
	"check": true, "compare": true, "translate": true, "refactor": true, "convert": true,
	"analyze": true, "analyse": true, "suggest": true, "propose": true, "design": true,
	"draft": true, "prepare": true, "investigate": true, "debug": true, "change": true,
}

// gist is the intent of a long specification: its first paragraph (the second too when the
// first is only a heading), then the paragraphs that ask for something, or their asking
// sentences, as long as it stays within maxIntentBytes.
func gist(prose string) string {
	paras := strings.Split(prose, "\n\n")
	var b strings.Builder
	add := func(s string) bool {
		if b.Len() > 0 && b.Len()+2+len(s) > maxIntentBytes {
			return false
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
		return true
	}
	add(cut(paras[0], maxIntentBytes))
	k := 1
	if isHeading(paras[0]) && len(paras) > 1 {
		add(cut(paras[1], maxIntentBytes-b.Len()-2))
		k = 2
	}
	for _, p := range paras[k:] {
		if b.Len() >= maxIntentBytes-20 {
			break
		}
		if !asks(p) || add(p) {
			continue
		}
		var asking []string
		for _, s := range sentences(p) {
			if asks(s) {
				asking = append(asking, strings.TrimSpace(s))
			}
		}
		for len(asking) > 0 && !add(strings.Join(asking, " ")) {
			asking = asking[:len(asking)-1]
		}
	}
	return b.String()
}

// isHeading reports whether a paragraph is a single Markdown heading.
func isHeading(p string) bool {
	return strings.HasPrefix(p, "#") && !strings.Contains(p, "\n")
}

// asks reports whether text asks a question or for something.
func asks(text string) bool {
	if len(text) > 4096 {
		text = text[:4096]
	}
	if strings.ContainsAny(text, "?？¿") {
		return true
	}
	lower := strings.ToLower(text)
	for _, w := range requestWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	for _, s := range sentences(lower) {
		s = strings.TrimLeft(s, " \t\n-*>#0123456789.)")
		word, _, _ := strings.Cut(s, " ")
		if imperatives[strings.Trim(word, ",:;!")] {
			return true
		}
	}
	return false
}

// sentences splits text after ., ?, ! and their CJK forms, and at line breaks.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		switch r {
		case '.', '?', '!', '。', '？', '！', '\n':
			end := i + utf8.RuneLen(r)
			if r == '\n' || end == len(text) || text[end] == ' ' || text[end] == '\n' || r > utf8.RuneSelf {
				out = append(out, text[start:end])
				start = end
			}
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// cut shortens s to at most n bytes, at the end of a sentence or a word when there is one in
// the second half, with an ellipsis when anything was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	head := s[:n]
	if k := strings.LastIndexAny(head, ".?!\n"); k > n/2 {
		return head[:k+1]
	}
	if k := strings.LastIndexByte(head, ' '); k > n/2 {
		head = head[:k]
	}
	return head + "…"
}
