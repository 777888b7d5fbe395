package domain_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parley-chat/parley/domain"
)

// Every kind of text people write follows one rule: tab, newline and carriage return are
// text, every other control character is refused with where it is; each kind has its limit.
func TestTextKind_Check(t *testing.T) {
	tests := []struct {
		name string
		kind domain.TextKind
		in   string
		want string // "" for accepted
	}{
		{"MessageWithTabsAndNewlines", domain.MessageText, "a\tb\r\nc\n", ""},
		{"MessageNUL", domain.MessageText, "ab\x00", "The message contains a control character (U+0000) at character 3: remove it."},
		{"MessageEscape", domain.MessageText, "\x1b[31mred", "The message contains a control character (U+001B) at character 1: remove it."},
		{"MessageDEL", domain.MessageText, "x\x7f", "The message contains a control character (U+007F) at character 2: remove it."},
		{"MessageC1", domain.MessageText, "x\u0085", "The message contains a control character (U+0085) at character 2: remove it."},
		{"MessageInvalidUTF8", domain.MessageText, "caf\xe9", "The message contains bytes that are not text (invalid UTF-8) at character 4."},
		{"MessageReplacementCharacterIsText", domain.MessageText, "\uFFFD", ""},
		{"MessageRightToLeftIsText", domain.MessageText, "\u200Fשלום\u200E ok", ""},
		{"MessageTooLong", domain.MessageText, strings.Repeat("x", domain.MaxMessageBytes+1), "The message is too long (1.0 MB; at most 1.0 MB): attach a large text as a file instead."},
		{"AnswerAtTheLimit", domain.AnswerText, strings.Repeat("é", 20000), ""},
		{"AnswerOverTheLimit", domain.AnswerText, strings.Repeat("é", 20001), "The answer must be at most 20,000 characters (this has 20,001)."},
		{"ReasonOverTheLimit", domain.ReasonText, strings.Repeat("no ", 1000), "The reason must be at most 2000 characters (this has 3000)."},
		{"ReasonNUL", domain.ReasonText, "no\x00", "The reason contains a control character (U+0000) at character 3: remove it."},
		{"TitleOverTheLimit", domain.TitleText, strings.Repeat("t", 121), "A title must be at most 120 characters (this has 121)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.kind.Check(tt.in)
			got := ""
			if err != nil {
				got = domain.ErrorMessage(err)
				if domain.ErrorCode(err) != domain.EINVALID {
					t.Errorf("code %q, want EINVALID", domain.ErrorCode(err))
				}
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := domain.AnswerText.FieldProblem("a\x00"); got != "Contains a control character (U+0000) at character 2: remove it." {
		t.Errorf("field problem = %q", got)
	}
}

// Names read as what they are: no direction overrides, isolates or marks, no control
// characters, one line.
func TestCleanName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"invoice\u202Efdp.exe", "invoicefdp.exe"},
		{"\u2066Ann\u2069 \u200ELee\u200F\u061C", "Ann Lee"},
		{"  two\tlines\nhere\x00 ", "two lines here"},
		{"\u202A\u202B\u202C\u202D\u2067\u2068", ""},
		{"Zoë’s plan", "Zoë’s plan"},
		{"bad\xffbyte", "bad\uFFFDbyte"},
	}
	for _, tt := range tests {
		if got := domain.CleanName(tt.in); got != tt.want {
			t.Errorf("CleanName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFileName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"invoice\u202Efdp.exe", "invoicefdp.exe"},
		{"photo\u2067gpj.exe\u2069", "photogpj.exe"},
		{"a\x01b\x7f.txt", "ab.txt"},
		{`..\evil/"name".log`, "name.log"},
		{"\u202E", "file"},
		{"..", "file"},
		{strings.Repeat("a", 200) + ".csv", strings.Repeat("a", 116) + ".csv"},
	}
	for _, tt := range tests {
		if got := domain.FileName(tt.in); got != tt.want {
			t.Errorf("FileName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzCleanName holds the promises of CleanName and FileName for any input: valid UTF-8,
// no control or direction characters, and cleaning twice changes nothing.
func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"invoice\u202Efdp.exe", "a\x00b\nc", "\xff\xfe", `..\a/"b"`, " \u2066x\u2069 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, clean := range map[string]func(string) string{"CleanName": domain.CleanName, "FileName": domain.FileName} {
			got := clean(s)
			if !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || domain.IsBidiControl(r) }) {
				t.Errorf("%s(%q) = %q", name, s, got)
			}
			if again := clean(got); again != got {
				t.Errorf("%s(%q) = %q, and again %q", name, s, got, again)
			}
		}
	})
}

func TestFenceIsLongerThanTheBackticksInside(t *testing.T) {
	for _, c := range []struct{ lang, text, want string }{
		{"sh", "ls -l", "```sh\nls -l\n```"},
		{"", "a\n", "```\na\n```"},
		{"md", "x\n````\ny", "`````md\nx\n````\ny\n`````"},
	} {
		if got := domain.Fence(c.lang, c.text); got != c.want {
			t.Errorf("agent.Fence(%q, %q) = %q, want %q", c.lang, c.text, got, c.want)
		}
	}
}
