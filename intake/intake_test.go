package intake

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// scriptedModel is a Splitter that answers what it is told and counts its calls.
type scriptedModel struct {
	answer func(text string) (domain.Analysis, error)
	calls  int
}

func (m *scriptedModel) Split(ctx context.Context, text string) (domain.Analysis, error) {
	m.calls++
	return m.answer(text)
}

// newTestAnalyzer returns New's analyzer with its log in a buffer.
func newTestAnalyzer(t *testing.T, opts Options) (domain.Analyzer, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	return New(opts), &buf
}

func TestAnalyzer_Whole(t *testing.T) {
	model := &scriptedModel{answer: func(string) (domain.Analysis, error) { return domain.Analysis{}, errors.New("not called") }}
	az, _ := newTestAnalyzer(t, Options{Model: model})
	text := "  Kannst du mir bitte erklären, warum der Import seit gestern fehlschlägt?  \r\n\r\n\r\n```\nValueError: bad amount\n```\n\n"
	a, err := az.Analyze(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	if a.Intent != text {
		t.Errorf("intent is not the text byte for byte: got %q", a.Intent)
	}
	if len(a.Items) != 0 || a.Via != "whole" {
		t.Errorf("got %d items via %q, want none via whole", len(a.Items), a.Via)
	}
	if a.Language != "de" {
		t.Errorf("language: got %q, want de", a.Language)
	}
	if a.Threshold != 819 || a.Tokens != CountTokens(text) || a.Tokens == 0 {
		t.Errorf("got tokens %d, threshold %d; want %d, 819", a.Tokens, a.Threshold, CountTokens(text))
	}
	if model.calls != 0 {
		t.Errorf("the model was asked about a small message")
	}
}

func TestAnalyzer_ThresholdEdges(t *testing.T) {
	text := "Why do the requests fail?\n" + appLog(10)
	tokens := CountTokens(text)
	tests := []struct {
		name    string
		window  int
		wantVia string
	}{
		{"AtThreshold", 2 * tokens, "whole"},
		{"OneTokenOver", 2 * (tokens - 1), "builtin"},
		{"WellUnder", 100 * tokens, "whole"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			az, _ := newTestAnalyzer(t, Options{ContextWindow: tt.window, Share: 0.5})
			a, err := az.Analyze(context.Background(), text)
			if err != nil {
				t.Fatal(err)
			}
			if a.Via != tt.wantVia || a.Tokens != tokens || a.Threshold != tt.window/2 {
				t.Fatalf("got via %q, tokens %d, threshold %d; want %q, %d, %d", a.Via, a.Tokens, a.Threshold, tt.wantVia, tokens, tt.window/2)
			}
			switch tt.wantVia {
			case "whole":
				if a.Intent != text || len(a.Items) != 0 {
					t.Errorf("a message at the threshold was split")
				}
			case "builtin":
				if a.Intent != "Why do the requests fail?" || len(a.Items) != 1 {
					t.Errorf("a message over the threshold was not split: intent %q, %d items", a.Intent, len(a.Items))
				}
			}
		})
	}
}

func TestAnalyzer_Threshold(t *testing.T) {
	tests := []struct {
		window int
		share  float64
		want   int
	}{
		{0, 0, 819},
		{128000, 0, 12800},
		{100, 0.29, 29},
		{-5, -1, 819},
	}
	for _, tt := range tests {
		a, err := New(Options{ContextWindow: tt.window, Share: tt.share}).Analyze(context.Background(), "hi")
		if err != nil || a.Threshold != tt.want {
			t.Errorf("window %d, share %v: got threshold %d (%v), want %d", tt.window, tt.share, a.Threshold, err, tt.want)
		}
	}
}

func TestAnalyzer_Model(t *testing.T) {
	log := appLog(60)
	text := "Warum bekommen wir alle paar Minuten den Fehler 'ledger closed'?\n\n" + log
	tests := []struct {
		name      string
		answer    func(text string) (domain.Analysis, error)
		wantVia   string
		wantLang  string
		wantItems int
		wantLog   string
	}{
		{
			name: "Valid",
			answer: func(string) (domain.Analysis, error) {
				return domain.Analysis{Language: "DE", Intent: "Warum kommt 'ledger closed'?", Items: []domain.ContextItem{
					{Title: "Server log", MimeType: "text/x-log; charset=utf-8", Content: log},
				}}, nil
			},
			wantVia: "model", wantLang: "de", wantItems: 1,
		},
		{
			name: "ValidWithoutLanguage",
			answer: func(string) (domain.Analysis, error) {
				return domain.Analysis{Intent: "Warum kommt 'ledger closed'?", Items: []domain.ContextItem{{Content: log}}}, nil
			},
			wantVia: "model", wantLang: "de", wantItems: 1,
		},
		{
			name: "InventedContent",
			answer: func(string) (domain.Analysis, error) {
				return domain.Analysis{Intent: "Warum?", Items: []domain.ContextItem{{Content: "2025-03-14 ERROR something the model made up"}}}, nil
			},
			wantVia: "fallback", wantLang: "de", wantLog: "is not in the message",
		},
		{
			name: "LostContent",
			answer: func(string) (domain.Analysis, error) {
				return domain.Analysis{Intent: "Warum kommt 'ledger closed'?"}, nil
			},
			wantVia: "fallback", wantLang: "de", wantLog: "leave out",
		},
		{
			name:    "Error",
			answer:  func(string) (domain.Analysis, error) { return domain.Analysis{}, errors.New("model: 503 overloaded") },
			wantVia: "fallback", wantLang: "de", wantLog: "503 overloaded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &scriptedModel{answer: tt.answer}
			az, logs := newTestAnalyzer(t, Options{ContextWindow: 10000, Share: 0.01, Model: model})
			a, err := az.Analyze(context.Background(), text)
			if err != nil {
				t.Fatal(err)
			}
			if model.calls != 1 {
				t.Errorf("model asked %d times, want 1", model.calls)
			}
			if a.Via != tt.wantVia || a.Language != tt.wantLang || len(a.Items) != tt.wantItems {
				t.Errorf("got via %q, language %q, %d items; want %q, %q, %d", a.Via, a.Language, len(a.Items), tt.wantVia, tt.wantLang, tt.wantItems)
			}
			if a.Tokens != CountTokens(text) || a.Threshold != 100 {
				t.Errorf("got tokens %d, threshold %d", a.Tokens, a.Threshold)
			}
			if tt.wantVia == "fallback" && a.Intent != text {
				t.Errorf("a fallback is not the message whole")
			}
			if tt.wantVia == "model" && a.Items[0].MimeType != "text/x-log" && a.Items[0].MimeType != "text/plain" {
				t.Errorf("mime not cleaned: %q", a.Items[0].MimeType)
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, logs)
			}
			if strings.Contains(logs.String(), "ledger") || strings.Contains(logs.String(), "INFO") && tt.wantLog != "" {
				t.Errorf("the log holds the message's content:\n%s", logs)
			}
		})
	}
}

func TestAnalyzer_ModelCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	model := &scriptedModel{answer: func(string) (domain.Analysis, error) {
		cancel()
		return domain.Analysis{}, context.Canceled
	}}
	az, _ := newTestAnalyzer(t, Options{ContextWindow: 10000, Share: 0.001, Model: model})
	_, err := az.Analyze(ctx, appLog(50))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestAnalyzer_InvalidUTF8(t *testing.T) {
	az, _ := newTestAnalyzer(t, Options{})
	a, err := az.Analyze(context.Background(), "caf\xe9 \x00 ok?")
	if err != nil {
		t.Fatal(err)
	}
	if a.Intent != "caf\uFFFD \uFFFD ok?" {
		t.Errorf("got %q", a.Intent)
	}
}

func TestAnalyzer_Huge(t *testing.T) {
	log := appLog(2000)
	text := "Why?\n" + strings.Repeat(log+"\n", (20<<20)/len(log))
	model := &scriptedModel{answer: func(text string) (domain.Analysis, error) {
		return domain.Analysis{Intent: "Why?", Items: []domain.ContextItem{{Title: "log", Content: text[5:]}}}, nil
	}}
	for _, opts := range []Options{{}, {Model: model}} {
		az, _ := newTestAnalyzer(t, opts)
		a, err := az.Analyze(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		if a.Intent != "Why?" || len(a.Items) != 1 || len(a.Items[0].Content) < 20<<20-len(log) {
			t.Errorf("via %s: got intent %q, %d items", a.Via, a.Intent, len(a.Items))
		}
		// Far over the model's window: its answer could never repeat the log.
		if a.Via != "builtin" || model.calls != 0 {
			t.Errorf("got via %q after %d model calls, want the built-in splitter alone", a.Via, model.calls)
		}
	}
}

// A message over half the model's window goes to the built-in splitter: the model's answer
// repeats the blocks, so it could not hold them; at half the window the model is asked.
func TestAnalyzer_ModelWindow(t *testing.T) {
	text := "Why do the requests fail?\n\n" + appLog(80)
	tokens := CountTokens(text)
	for _, tt := range []struct {
		window    int
		wantCalls int
		wantVia   string
	}{
		{tokens * 2, 1, "model"},
		{tokens*2 - 2, 0, "builtin"},
	} {
		model := &scriptedModel{answer: func(text string) (domain.Analysis, error) {
			_, log, _ := strings.Cut(text, "\n\n")
			return domain.Analysis{Intent: "Why do the requests fail?", Items: []domain.ContextItem{{Content: log}}}, nil
		}}
		az, _ := newTestAnalyzer(t, Options{ContextWindow: tt.window, Share: 0.01, Model: model})
		a, err := az.Analyze(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		if model.calls != tt.wantCalls || a.Via != tt.wantVia || a.Intent != "Why do the requests fail?" || len(a.Items) != 1 {
			t.Errorf("window %d: %d calls, via %q, intent %q, %d items; want %d calls via %q", tt.window, model.calls, a.Via, a.Intent, len(a.Items), tt.wantCalls, tt.wantVia)
		}
	}
}

func TestAnalyzer_Concurrent(t *testing.T) {
	az := New(Options{ContextWindow: 1000})
	texts := []string{"Warum bricht der Import ab?\n" + appLog(50), "Why?\n" + javaTrace + "\n" + payments, "short question, is it?"}
	done := make(chan error)
	for i := range 8 {
		go func() {
			_, err := az.Analyze(context.Background(), texts[i%len(texts)])
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
