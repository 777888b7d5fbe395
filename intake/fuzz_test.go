package intake

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parley-chat/parley/domain"
)

// FuzzSplit checks Split on any text: it does not panic, loses nothing (every character
// that is not whitespace or a code fence is in the intent or an item) and makes at most
// MaxItems items.
func FuzzSplit(f *testing.F) {
	seeds := []string{
		"", "\n", "```", "```go\n", "~~~\n~~~", "{", "[\n]", "---\nkey:\n  a: 1\n",
		"Why?\n" + javaTrace, goPanic, pythonTrace, rustPanic, dotnetTrace, payments, manifest,
		webhook, chat, quoted, checklist, mdTable, ndjson, patch, appLog(30), spec(),
		"Why?\n" + goBlock(1) + "\n" + goBlock(2),
		"caf\xe9\x00\xff " + strings.Repeat("a,b;c\t|", 40),
		strings.Repeat("> q\n", 5) + strings.Repeat("- item\n", 9),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a := Split(text)
		assertKept(t, text, a)
	})
}

// FuzzValidate checks Validate on any message and any model answer: it does not panic, and
// an analysis it accepts has a concise intent and items that are text of the message.
func FuzzValidate(f *testing.F) {
	log := appLog(6)
	f.Add("Why?\n\n"+log, "Why?", "app.log", "text/x-log", log)
	f.Add("Why?\n\n"+log, "Why?", "", "JSON", strings.Join(strings.Fields(log), " "))
	f.Add("caf\xe9 \x00", "caf", "t", "", "\xe9")
	f.Add("a  b\n\nc", " a b ", "x", "text/plain", "c")
	f.Fuzz(func(t *testing.T, text, intent, title, mimeType, content string) {
		a, err := Validate(text, domain.Analysis{Intent: intent, Items: []domain.ContextItem{{Title: title, MimeType: mimeType, Content: content}}})
		if err != nil {
			return
		}
		cleaned := clean(text)
		if a.Intent == "" || len(a.Intent) > maxModelIntentBytes {
			t.Fatalf("accepted intent of %d bytes", len(a.Intent))
		}
		for _, it := range a.Items {
			if !strings.Contains(cleaned, it.Content) {
				t.Fatalf("accepted item %q is not in the message %q", it.Content, cleaned)
			}
			if strings.ContainsAny(it.Title, "\n\r") {
				t.Fatalf("title %q spans lines", it.Title)
			}
		}
	})
}

// FuzzCountTokens checks that the estimate never panics, is zero only for blank text and
// grows when text is appended.
func FuzzCountTokens(f *testing.F) {
	for _, s := range []string{"", "hello world", "caf\xe9", "日本語のテキスト", appLog(5), javaTrace} {
		f.Add(s, "more")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		n := CountTokens(a)
		if n < 0 || (strings.TrimSpace(a) != "" && n == 0 && utf8.ValidString(a)) {
			t.Fatalf("CountTokens(%q) = %d", a, n)
		}
		if m := CountTokens(a + "\n" + b); m < n {
			t.Fatalf("appending %q lowered the count from %d to %d", b, n, m)
		}
	})
}
