package intake

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parley-chat/parley/domain"
)

// assertKept checks the analyzer's promise: every character of text that is not whitespace
// (nor part of a code fence line, which Split strips) is in the intent or an item, counted
// as a multiset; items are at most MaxItems, none empty, and all of it is valid UTF-8.
func assertKept(tb testing.TB, text string, a domain.Analysis) {
	tb.Helper()
	need := map[rune]int{}
	for _, l := range strings.Split(clean(text), "\n") {
		if isFenceLine(l) {
			continue
		}
		for _, r := range l {
			if !unicode.IsSpace(r) {
				need[r]++
			}
		}
	}
	have := map[rune]int{}
	count := func(s string) {
		for _, r := range s {
			have[r]++
		}
	}
	count(a.Intent)
	for _, it := range a.Items {
		count(it.Content)
		count(it.Title) // a fence's info string may name the file
	}
	for r, n := range need {
		if have[r] < n {
			tb.Fatalf("lost %q: %d in the message, %d in the analysis", r, n, have[r])
		}
	}
	if len(a.Items) > MaxItems {
		tb.Fatalf("got %d items, want at most %d", len(a.Items), MaxItems)
	}
	if !utf8.ValidString(a.Intent) {
		tb.Fatalf("intent is not valid UTF-8")
	}
	for i, it := range a.Items {
		if it.Content == "" || !utf8.ValidString(it.Content) {
			tb.Fatalf("item %d: empty or invalid content", i+1)
		}
		if it.MimeType == "" || it.Title == "" {
			tb.Fatalf("item %d: got title %q, mime %q", i+1, it.Title, it.MimeType)
		}
	}
}

// assertVerbatim checks that the items Split cut out (not a merged or specification item)
// are the message's own bytes.
func assertVerbatim(tb testing.TB, text string, a domain.Analysis) {
	tb.Helper()
	for i, it := range a.Items {
		if it.Title == "More context" || it.Title == "Specification" {
			continue
		}
		if !strings.Contains(text, it.Content) {
			tb.Fatalf("item %d %q is not in the message as written", i+1, it.Title)
		}
	}
}

func isFenceLine(l string) bool {
	t := strings.TrimLeft(l, " ")
	return len(l)-len(t) <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"))
}

// appLog is n lines of a realistic server log with a Java exception every 100 lines.
func appLog(n int) string {
	var b strings.Builder
	paths := []string{"/conversations/17", "/conversations/17/events", "/login", "/static/app.css"}
	for i := 0; i < n; i++ {
		sec := i % 60
		switch {
		case i%100 == 99 && i+4 < n:
			fmt.Fprintf(&b, "2025-03-14T09:%02d:%02d.%03dZ ERROR [runner] step failed conversation=17 run=%d\n", i/60%60, sec, i%1000, i)
			b.WriteString("java.lang.IllegalStateException: ledger closed\n")
			b.WriteString("\tat com.acme.ledger.Ledger.append(Ledger.java:211)\n")
			b.WriteString("\tat com.acme.runner.Runner.step(Runner.java:87)\n")
			b.WriteString("\t... 14 more\n")
			i += 4
		case i%7 == 3:
			fmt.Fprintf(&b, "2025-03-14T09:%02d:%02d.%03dZ WARN  [openai] slow response model=gpt-4o-mini duration=%dms\n", i/60%60, sec, i%1000, 900+i%300)
		default:
			fmt.Fprintf(&b, "2025-03-14T09:%02d:%02d.%03dZ INFO  [http] GET %s status=200 duration=%d.%dms bytes=%d trace=%016x user=u%d\n", i/60%60, sec, i%1000, paths[i%len(paths)], i%40, i%10, 1000+i*7, uint64(i)*0x9e3779b97f4a7c15, i%97)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// goBlock is a fenced Go snippet of about 250 bytes.
func goBlock(i int) string {
	return fmt.Sprintf("```go\nfunc handler%d(w http.ResponseWriter, r *http.Request) {\n\tid := r.PathValue(\"id\")\n\tif id == \"\" {\n\t\thttp.Error(w, \"missing id\", http.StatusBadRequest)\n\t\treturn\n\t}\n\tfmt.Fprintf(w, \"conversation %%s, handler %d\\n\", id)\n}\n```", i, i)
}
