package intake

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestValidate(t *testing.T) {
	log := appLog(80)
	text := "Why do the requests fail?\n\n" + log + "\n\nThanks!"
	reflowed := strings.Join(strings.Fields(log), "  ")
	tests := []struct {
		name      string
		in        domain.Analysis
		wantErr   string
		wantItems []domain.ContextItem
		wantLang  string
	}{
		{
			name: "OK",
			in: domain.Analysis{Language: "en", Intent: " Why do the requests fail? ", Items: []domain.ContextItem{
				{Title: "Server log", MimeType: "text/x-log", Content: log},
			}},
			wantItems: []domain.ContextItem{{Title: "Server log", MimeType: "text/x-log", Content: log}},
			wantLang:  "en",
		},
		{
			name: "ReflowedContentGetsItsBytesBack",
			in: domain.Analysis{Intent: "Why?", Items: []domain.ContextItem{
				{Title: "log", MimeType: "text/plain", Content: reflowed},
			}},
			wantItems: []domain.ContextItem{{Title: "log", MimeType: "text/plain", Content: log}},
		},
		{
			name: "Cleaned",
			in: domain.Analysis{Language: "German", Intent: "Why?", Items: []domain.ContextItem{
				{Title: "  Server\n\tlog\x00 ", MimeType: "JSON", Content: log},
			}},
			wantItems: []domain.ContextItem{{Title: "Server log\uFFFD", MimeType: "application/json", Content: log}},
			wantLang:  "de",
		},
		{name: "EmptyIntent", in: domain.Analysis{Intent: " \n "}, wantErr: "intent is empty"},
		{name: "IntentTooLong", in: domain.Analysis{Intent: text + text}, wantErr: "longer than the message"},
		{
			name:    "EmptyItem",
			in:      domain.Analysis{Intent: "Why?", Items: []domain.ContextItem{{Title: "log", Content: log}, {Title: "x", Content: " \n"}}},
			wantErr: "item 2 has no content",
		},
		{
			name:    "InventedItem",
			in:      domain.Analysis{Intent: "Why?", Items: []domain.ContextItem{{Content: log + "\n2025-03-14T10:00:00Z INFO invented"}}},
			wantErr: "item 1 (",
		},
		{
			name:    "TruncatedAwayMostOfTheLog",
			in:      domain.Analysis{Intent: "Why?", Items: []domain.ContextItem{{Content: log[:200]}}},
			wantErr: "leave out",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Validate(text, tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "INFO") {
					t.Errorf("the error quotes the content: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Intent != strings.TrimSpace(tt.in.Intent) || got.Language != tt.wantLang {
				t.Errorf("got intent %q, language %q", got.Intent, got.Language)
			}
			if fmt.Sprint(got.Items) != fmt.Sprint(tt.wantItems) {
				t.Errorf("items:\ngot  %q\nwant %q", got.Items, tt.wantItems)
			}
		})
	}
}

func TestValidate_TooManyItems(t *testing.T) {
	var b strings.Builder
	var items []domain.ContextItem
	for i := range 60 {
		block := goBlock(i)
		b.WriteString(block + "\n")
		items = append(items, domain.ContextItem{Title: fmt.Sprint(i), MimeType: "text/x-go", Content: block})
	}
	got, err := Validate(b.String(), domain.Analysis{Intent: "Review these.", Items: items})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != MaxItems || got.Items[MaxItems-1].Title != "More context" {
		t.Fatalf("got %d items, want %d ending in More context", len(got.Items), MaxItems)
	}
	if !strings.Contains(got.Items[MaxItems-1].Content, "handler59(") {
		t.Errorf("the merged item lacks the last block")
	}
}

func TestCleanMime(t *testing.T) {
	tests := map[string]string{
		"":                                "text/plain",
		"application/json; charset=utf-8": "application/json",
		" Text/X-Go ":                     "text/x-go",
		"yaml":                            "application/yaml",
		"a log file":                      "text/plain",
		"text/":                           "text/plain",
		"image/png":                       "image/png",
	}
	for in, want := range tests {
		if got := cleanMime(in); got != want {
			t.Errorf("cleanMime(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestCleanLanguage(t *testing.T) {
	tests := map[string]string{
		"de": "de", "DE": "de", "de-CH": "de", "pt_BR": "pt", "deu": "de", "German": "de",
		"": "", "Klingon": "", "d": "", "12": "", "english language": "",
	}
	for in, want := range tests {
		if got := cleanLanguage(in); got != want {
			t.Errorf("cleanLanguage(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestValidate_IntentNotConcise(t *testing.T) {
	log := appLog(2000)
	prose := strings.Repeat("The person rambles on about the weather. ", 110)
	text := "Why do the requests fail? " + prose + "\n\n" + log
	// An invented intent of 4.5 KB stands in for the prose (and would pass the coverage rule).
	_, err := Validate(text, domain.Analysis{Intent: "Why? " + prose, Items: []domain.ContextItem{{Content: log}}})
	if err == nil || !strings.Contains(err.Error(), "not concise") {
		t.Fatalf("got %v, want the intent refused as not concise", err)
	}
	if _, err := Validate(text, domain.Analysis{Intent: "Why do the requests fail?", Items: []domain.ContextItem{{Content: prose}, {Content: log}}}); err != nil {
		t.Fatalf("a concise intent: %v", err)
	}
}
