package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley-chat/parley/intake"
)

// TestIntakeWithTheModel runs intake as Parley does for an agent with analyzer = "model":
// above the threshold the fake endpoint is asked, and only an analysis that keeps the
// message's content is used; anything else leaves the message whole.
func TestIntakeWithTheModel(t *testing.T) {
	logLines := strings.Repeat("2024-05-01T10:00:00Z ERROR payment declined for order 4411\n", 60)
	raw := "Why does the checkout of our shop fail since this morning?\n\n" + logLines
	valid := `{"detectedLanguage":"en","intent":"Why does the checkout of our shop fail since this morning?","contextItems":[{"title":"checkout.log","mimeType":"text/x-log","content":` + quote(logLines) + `}]}`
	invented := `{"detectedLanguage":"en","intent":"Why does the checkout of our shop fail since this morning?","contextItems":[{"title":"checkout.log","mimeType":"text/x-log","content":"2024-05-01 ERROR something the person never wrote"}]}`
	tests := []struct {
		name, via string
		reply     respond
		items     int
		intent    string
	}{
		{"valid JSON", "model", text(valid), 1, "Why does the checkout of our shop fail since this morning?"},
		{"invalid JSON", "fallback", text(`{"intent": "Why does the checkout of our shop fail since this morning?", "contextItems": [`), 0, raw},
		{"content the message does not have", "fallback", text(invented), 0, raw},
		{"endpoint error", "fallback", status(500, "application/json", `{"error":{"message":"boom"}}`), 0, raw},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.reply)
			az := intake.New(intake.Options{ContextWindow: 8000, Share: 0.025, Model: newAnalyzer(t, srv.url())})
			got, err := az.Analyze(context.Background(), raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.Via != tt.via || len(got.Items) != tt.items || got.Intent != tt.intent {
				t.Fatalf("got via %q, %d items, intent %.60q; want %q, %d, %.60q", got.Via, len(got.Items), got.Intent, tt.via, tt.items, tt.intent)
			}
			if tt.items > 0 && got.Items[0].Content != strings.TrimRight(logLines, "\n") {
				t.Fatalf("the document is not the log as written: %.80q", got.Items[0].Content)
			}
			if got.Language != "en" {
				t.Fatalf("language %q", got.Language)
			}
		})
	}

	// A message under the threshold never reaches the model.
	srv := newFakeServer(t)
	got, err := intake.New(intake.Options{ContextWindow: 8000, Share: 0.025, Model: newAnalyzer(t, srv.url())}).Analyze(context.Background(), "Why does the checkout of our shop fail since this morning?")
	if err != nil || got.Via != "whole" || len(srv.sent()) != 0 {
		t.Fatalf("short message: via %q, %d requests, %v", got.Via, len(srv.sent()), err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
