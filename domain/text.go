package domain

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TextKind is a kind of text people write (a message, an answer, a reason, a title, a name)
// with the most of it Parley takes. Every kind follows one rule for characters: valid UTF-8,
// and no control character but tab, newline and carriage return (NUL, escape, DEL and the
// like are refused, with a message that says which and where, never silently dropped).
type TextKind struct {
	// Subject names the text in messages: "The reason".
	Subject string
	// MaxRunes and MaxBytes bound it, in characters and in bytes (0: no such bound).
	MaxRunes, MaxBytes int
	// Instead says what to do with a text that is too long.
	Instead string
}

// MaxMessageBytes bounds one message.
const MaxMessageBytes = 1 << 20

// MaxTitle is the longest title a person may give a conversation, in characters.
const MaxTitle = 120

// The limits of what people write, one set for the pages, the API and A2A alike.
var (
	MessageText = TextKind{Subject: "The message", MaxBytes: MaxMessageBytes, Instead: "attach a large text as a file instead"}
	AnswerText  = TextKind{Subject: "The answer", MaxRunes: 20000}
	ReasonText  = TextKind{Subject: "The reason", MaxRunes: 2000}
	TitleText   = TextKind{Subject: "A title", MaxRunes: MaxTitle}
	// NameText is a name a person gives: their display name, a token's name.
	NameText = TextKind{Subject: "The name", MaxRunes: 60}
)

// Check is an EINVALID error saying what is wrong with s, if anything.
func (k TextKind) Check(s string) error {
	return k.fail(k.problem(s))
}

// CheckChars is Check on the characters of s only, for a text whose length counts once it
// is cleaned (a title's spaces collapsed).
func (k TextKind) CheckChars(s string) error {
	return k.fail(charProblem(s))
}

func (k TextKind) fail(problem string) error {
	if problem == "" {
		return nil
	}
	return Errorf(EINVALID, "%s %s", k.Subject, problem)
}

// FieldProblem is what is wrong with s, said next to the form field holding it ("" when
// nothing is).
func (k TextKind) FieldProblem(s string) string {
	p := k.problem(s)
	if p == "" {
		return ""
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

// problem is what is wrong with s, as the end of a sentence about it.
func (k TextKind) problem(s string) string {
	if k.MaxBytes > 0 && len(s) > k.MaxBytes {
		p := fmt.Sprintf("is too long (%s; at most %s)", ByteSize(int64(len(s))), ByteSize(int64(k.MaxBytes)))
		if k.Instead != "" {
			return p + ": " + k.Instead + "."
		}
		return p + "."
	}
	if k.MaxRunes > 0 && len(s) > k.MaxRunes {
		if n := utf8.RuneCountInString(s); n > k.MaxRunes {
			return fmt.Sprintf("must be at most %s characters (this has %s).", LimitNumber(float64(k.MaxRunes)), LimitNumber(float64(n)))
		}
	}
	return charProblem(s)
}

// charProblem is the one rule for the characters of what people write: valid UTF-8, and no
// control character but tab, newline and carriage return.
func charProblem(s string) string {
	at := 0
	for i, r := range s {
		at++
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Sprintf("contains bytes that are not text (invalid UTF-8) at character %d.", at)
		case unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r':
			return fmt.Sprintf("contains a control character (%U) at character %d: remove it.", r, at)
		}
	}
	return ""
}

// IsBidiControl reports whether r is one of the invisible characters that change the
// direction text is shown in (U+202A-U+202E embeddings and overrides, U+2066-U+2069
// isolates, the marks U+200E, U+200F and U+061C). In a name they make it read as another:
// "invoice\u202Efdp.exe" shows as "invoiceexe.pdf".
func IsBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

// CleanName is a name as Parley keeps and shows it: one line, spaces collapsed, without
// control characters or bidirectional controls, so that it reads as what it is. Titles,
// display names, token names and file names are cleaned so.
func CleanName(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || IsBidiControl(r):
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// FileName is the name an uploaded file is kept and shown under: its base name without
// control characters, bidirectional controls or quotes, at most 120 bytes (the extension
// kept).
func FileName(name string) string {
	name = path.Base(strings.ReplaceAll(strings.ToValidUTF8(name, "\uFFFD"), "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || IsBidiControl(r) || r == '"' || r == '/' {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "" || name == "." || name == ".." {
		name = "file"
	}
	if len(name) > 120 {
		ext := path.Ext(name)
		if len(ext) > 12 {
			ext = ""
		}
		name = strings.ToValidUTF8(name[:120-len(ext)], "") + ext
	}
	return name
}

// Fence writes text as a fenced Markdown code block of the language lang that its own
// backticks cannot close (the fence is longer than any run of them in it).
func Fence(lang, text string) string {
	n, run := 3, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	ticks := strings.Repeat("`", n)
	return ticks + lang + "\n" + strings.TrimSuffix(text, "\n") + "\n" + ticks
}

// NormalizeNewlines turns the CRLF of form posts (and lone CRs) into LF.
func NormalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
