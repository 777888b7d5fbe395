package intake

import (
	"strings"
	"testing"
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
