package openai_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

// rawMessage is what a person sent; no error may quote it.
const rawMessage = "Please find why checkout fails. SECRET-CUSTOMER-7 logs:\n2024-05-01 ERROR payment declined\n"

func newAnalyzer(t *testing.T, base string, change ...func(*openai.Config)) *openai.Analyzer {
	t.Helper()
	cfg := openai.Config{Name: "helper", BaseURL: base, Model: "fake-model", APIKey: "sk-test"}
	for _, f := range change {
		f(&cfg)
	}
	az, err := openai.NewAnalyzer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return az
}

const analysisJSON = `{"detectedLanguage": "en", "intent": "Find why checkout fails; the logs are attached.",
 "contextItems": [{"title": "checkout.log", "mimeType": "text/x-log", "content": "2024-05-01 ERROR payment declined\n"}]}`

var wantAnalysis = domain.Analysis{
	Language: "en",
	Intent:   "Find why checkout fails; the logs are attached.",
	Items:    []domain.ContextItem{{Title: "checkout.log", MimeType: "text/x-log", Content: "2024-05-01 ERROR payment declined\n"}},
	Via:      "model",
}

func TestAnalyzer_Split(t *testing.T) {
	tests := []struct {
		name, reply string
		want        domain.Analysis
	}{
		{"OK", analysisJSON, wantAnalysis},
		{"fenced", "```json\n" + analysisJSON + "\n```", wantAnalysis},
		{"after a think block", "<think>The user wants...</think>\n" + analysisJSON, wantAnalysis},
		{"no items", `{"detectedLanguage":"de","intent":"Fasse zusammen.","contextItems":[]}`,
			domain.Analysis{Language: "de", Intent: "Fasse zusammen.", Items: []domain.ContextItem{}, Via: "model"}},
		{"nulls", `{"detectedLanguage":null,"intent":" Do it. ","contextItems":null}`,
			domain.Analysis{Intent: "Do it.", Via: "model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, text(tt.reply))
			got, err := newAnalyzer(t, srv.url()).Split(context.Background(), rawMessage)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			req := srv.last()
			if req.Stream {
				t.Error("the analyzer request streams")
			}
			if got := req.ResponseFormat["type"]; got != "json_object" {
				t.Errorf("response_format: got %v, want json_object", req.ResponseFormat)
			}
			if got := roles(req); !reflect.DeepEqual(got, []string{"system", "user"}) {
				t.Fatalf("roles: got %v", got)
			}
			sys := req.Messages[0].Content
			if !strings.HasPrefix(sys, "You are an input analyzer.") || !strings.Contains(sys, "\n{\n  \"detectedLanguage\": \"en\",") || strings.Contains(sys, "{{") {
				t.Errorf("system prompt:\n%s", sys)
			}
			if req.Messages[1].Content != rawMessage {
				t.Errorf("user message: got %q, want the raw message", req.Messages[1].Content)
			}
			if len(req.Tools) != 0 {
				t.Errorf("tools offered: %+v", req.Tools)
			}
			if h := srv.headers[0].Get("Authorization"); h != "Bearer sk-test" {
				t.Errorf("Authorization: got %q", h)
			}
		})
	}
}

func TestAnalyzer_SplitFails(t *testing.T) {
	tests := []struct {
		name  string
		reply respond
		want  string
	}{
		{"not JSON", text("Sure! The user wants to find why checkout fails. SECRET-CUSTOMER-7"), "the reply is not JSON (error at byte 1 of"},
		{"cut JSON", text(`{"intent": "Find why`), "the reply is not JSON (it ends early"},
		{"open fence", text("```json\n" + analysisJSON), "the reply is not JSON"},
		{"text after", text(analysisJSON + "\nHope this helps!"), "text after its JSON object"},
		{"a list", text(`[{"intent":"x"}]`), "the reply is JSON array, not an object"},
		{"intent not a string", text(`{"intent": ["a"]}`), "intent must be a string"},
		{"language not a string", text(`{"detectedLanguage": 1, "intent": "x"}`), "detectedLanguage must be a string"},
		{"items not a list", text(`{"intent": "x", "contextItems": {"content": "y"}}`), "contextItems must be a list"},
		{"item not an object", text(`{"intent": "x", "contextItems": ["y"]}`), "contextItems[0] must be an object"},
		{"content not a string", text(`{"intent": "x", "contextItems": [{"title": "t", "content": 5}]}`), "contextItems[0].content must be a string"},
		{"empty intent", text(`{"detectedLanguage": "en", "intent": "  ", "contextItems": []}`), "the reply has no intent"},
		{"no intent", text(`{"detectedLanguage": "en"}`), "the reply has no intent"},
		{"cut by length", textFinish("length", `{"intent": "x"}`), "cut off by the model's length limit"},
		{"HTTP 500", status(500, "application/json", `{"error":{"message":"The model is overloaded.\nTry again later.","type":"server_error"}}`),
			"answered 500 Internal Server Error: The model is overloaded. Try again later. (server_error)"},
		{"HTTP 404", status(404, "application/json", `{"error":"model \"fake-model\" not found"}`),
			`answered 404 Not Found: model "fake-model" not found; check the base URL and the model name`},
		{"HTML page", status(200, "text/html", "<html>login</html>"), `answered with "text/html" instead of JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.reply)
			_, err := newAnalyzer(t, srv.url()).Split(context.Background(), rawMessage)
			if err == nil {
				t.Fatal("got no error")
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			if !strings.HasPrefix(msg, "intake analyzer (fake-model): ") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not say %q", msg, tt.want)
			}
			if strings.Contains(msg, "SECRET-CUSTOMER-7") || strings.Contains(msg, "\n") {
				t.Errorf("error quotes the message or spans lines: %q", msg)
			}
			if len(srv.sent()) != 1 {
				t.Errorf("sent %d requests, want 1", len(srv.sent()))
			}
		})
	}
}

func TestAnalyzer_Timeout(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	az := newAnalyzer(t, srv.url(), func(c *openai.Config) { c.FirstByteTimeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := az.Split(context.Background(), rawMessage)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 100ms") {
		t.Fatalf("got %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the timeout came after %s", d)
	}

	// A cancelled context is the caller's, not a fault of the endpoint.
	srv.then(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := az.Split(ctx, rawMessage); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the context's error", err)
	}
}

func TestNewAnalyzer(t *testing.T) {
	if _, err := openai.NewAnalyzer(openai.Config{BaseURL: "http://localhost:11434/v1"}); err == nil || !strings.Contains(err.Error(), "model is required") {
		t.Errorf("no model: got %v", err)
	}
	if _, err := openai.NewAnalyzer(openai.Config{Model: "m", BaseURL: "localhost"}); err == nil || !strings.Contains(err.Error(), "must be an http") {
		t.Errorf("bad URL: got %v", err)
	}
}
