package intake

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// spec is a long feature request: a first paragraph, requirements, and questions.
func spec() string {
	var b strings.Builder
	b.WriteString("## Export conversations\n\n")
	b.WriteString("As an admin I want to export a conversation, with its documents, as one ZIP archive, so that I can keep it outside Parley when a project ends.\n\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "Requirement %d. The archive keeps the messages in order and each document under its original name; names that collide get a numeric suffix, and the archive stays readable without Parley, in any unzip tool, on any system we support today.\n\n", i)
	}
	b.WriteString("Could you propose where the export button should go, and how we show progress for large conversations?\n\n")
	b.WriteString("The archive format itself is settled and needs no discussion.\n\n")
	b.WriteString("What should happen with messages that were deleted?")
	return b.String()
}

func TestSplit_LongSpec(t *testing.T) {
	text := spec()
	a := Split(text)
	assertKept(t, text, a)
	if len(a.Items) != 1 || a.Items[0].Title != "Specification" || a.Items[0].MimeType != "text/markdown" {
		t.Fatalf("got items %+v, want one Specification", a.Items)
	}
	if a.Items[0].Content != text {
		t.Errorf("the specification is not the whole prose")
	}
	if len(a.Intent) > maxIntentBytes {
		t.Errorf("intent is %d bytes, want at most %d", len(a.Intent), maxIntentBytes)
	}
	for _, want := range []string{
		"## Export conversations",
		"As an admin I want to export a conversation",
		"Could you propose where the export button should go",
		"What should happen with messages that were deleted?",
	} {
		if !strings.Contains(a.Intent, want) {
			t.Errorf("intent lacks %q:\n%s", want, a.Intent)
		}
	}
	if strings.Contains(a.Intent, "Requirement 3.") || strings.Contains(a.Intent, "needs no discussion") {
		t.Errorf("intent keeps paragraphs that ask nothing:\n%s", a.Intent)
	}
	if a.Language != "en" {
		t.Errorf("language: got %q, want en", a.Language)
	}
}

func TestSplit_LongSpecWithBlocks(t *testing.T) {
	text := spec() + "\n\nHere is the current export.log:\n" + appLog(40)
	a := Split(text)
	assertKept(t, text, a)
	if len(a.Items) != 2 || a.Items[0].Title != "Specification" || a.Items[1].Title != "export.log" {
		t.Fatalf("got %d items, want the specification then export.log", len(a.Items))
	}
	if strings.Contains(a.Items[0].Content, "INFO") {
		t.Errorf("the specification holds the log")
	}
}

func TestSplit_LongLogOneQuestion(t *testing.T) {
	log := appLog(2000)
	if n := strings.Count(log, "\n") + 1; n != 2000 {
		t.Fatalf("log has %d lines", n)
	}
	for _, tt := range []struct{ name, text string }{
		{"QuestionFirst", "Why do we get 'ledger closed' errors every few minutes?\n" + log},
		{"QuestionLast", log + "\n\nWhy do we get 'ledger closed' errors every few minutes?\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := Split(tt.text)
			if a.Intent != "Why do we get 'ledger closed' errors every few minutes?" {
				t.Errorf("intent: got %q", a.Intent)
			}
			if len(a.Items) != 1 || a.Items[0].Content != log || a.Items[0].Title != "Log excerpt" || a.Items[0].MimeType != "text/x-log" {
				t.Fatalf("want one log item with the whole log, got %d items", len(a.Items))
			}
			assertKept(t, tt.text, a)
		})
	}
}

func TestSplit_ThousandCodeBlocks(t *testing.T) {
	var b strings.Builder
	b.WriteString("Review these handlers for missing checks.\n\n")
	for i := range 1000 {
		b.WriteString(goBlock(i))
		b.WriteString("\n\n")
	}
	text := b.String()
	a := Split(text)
	assertKept(t, text, a)
	if len(a.Items) != MaxItems {
		t.Fatalf("got %d items, want %d", len(a.Items), MaxItems)
	}
	if a.Intent != "Review these handlers for missing checks." {
		t.Errorf("intent: got %q", a.Intent)
	}
	last := a.Items[MaxItems-1]
	if last.Title != "More context" || last.MimeType != "text/x-go" {
		t.Errorf("last item: got %q %s, want More context text/x-go", last.Title, last.MimeType)
	}
	if a.Items[0].Title != "Code (go)" || !strings.Contains(a.Items[0].Content, "handler0(") {
		t.Errorf("first item: got %q", a.Items[0].Title)
	}
	if !strings.Contains(last.Content, "handler49(") || !strings.Contains(last.Content, "handler999(") {
		t.Errorf("More context lacks blocks 50 to 1000")
	}
	if strings.Index(last.Content, "handler500(") > strings.Index(last.Content, "handler501(") {
		t.Errorf("More context is out of order")
	}
}

func TestSplit_Robust(t *testing.T) {
	huge := strings.Repeat(appLog(200)+"\n\nAnd some prose in between, asking why this happens?\n\n", 100)
	for len(huge) < 20<<20 {
		huge += huge
	}
	huge = huge[:20<<20]
	tests := []struct {
		name string
		text string
	}{
		{name: "InvalidUTF8", text: "Why does \xff\xfe this \xc3 fail?\n" + javaTrace},
		{name: "NULBytes", text: "binary\x00\x00\x01\x02 data\n" + strings.Repeat("\x00", 500)},
		{name: "Empty", text: ""},
		{name: "OnlyWhitespace", text: " \n\t\r\n  \n"},
		{name: "LongSingleLine", text: strings.Repeat("word, ", 2<<20)},
		{name: "LongJSONLine", text: "[" + strings.Repeat(`{"a":1,"b":"xyz"},`, 200000) + `{"a":2}]`},
		{name: "UnclosedFence", text: "Look:\n```go\n" + strings.Repeat("x := 1\n", 100)},
		{name: "UnbalancedJSON", text: strings.Repeat("{\n  \"a\": [\n", 20000)},
		{name: "ManyNearMissYAML", text: strings.Repeat("Alice: hi\n", 50000)},
		{name: "ManyShortTableRuns", text: strings.Repeat("a,b\nc,d\n\n", 50000)},
		{name: "ManyFenceLines", text: strings.Repeat("```\n", 100001)},
		{name: "ManyDiffHeadersNoHunk", text: strings.Repeat("--- a\n+++ b\n", 50000)},
		{name: "ManySpeakersNearMiss", text: strings.Repeat("Anna: hi\nBen: yo\nCleo: hey\nDan: x\nEve: y\nFay: z\nGus: w\n", 10000)},
		{name: "Huge", text: huge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			a := Split(tt.text)
			took := time.Since(start)
			assertKept(t, tt.text, a)
			if !utf8.ValidString(a.Intent) || strings.ContainsRune(a.Intent, 0) {
				t.Errorf("intent is not clean text")
			}
			// Generous: the point is linear time, not speed on a loaded CI machine.
			if limit := 2*time.Second + time.Duration(len(tt.text))*200*time.Nanosecond; took > limit && !raceEnabled {
				t.Errorf("took %v for %d bytes, want under %v", took, len(tt.text), limit)
			}
		})
	}
}
