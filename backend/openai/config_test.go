package openai_test

import (
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/openai"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     openai.Config
		wantErr string
	}{
		{"OK", openai.Config{Name: "llama", BaseURL: "http://localhost:11434/v1", Model: "llama3.2"}, ""},
		{"no name", openai.Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.2"}, "name is required"},
		{"no model", openai.Config{Name: "llama", BaseURL: "http://localhost:11434/v1"}, `agent "llama": model is required`},
		{"no base URL", openai.Config{Name: "llama", Model: "llama3.2"}, `agent "llama": base_url is required`},
		{"not http", openai.Config{Name: "llama", BaseURL: "ftp://example.com", Model: "m"}, `base_url "ftp://example.com" must be an http:// or https:// URL`},
		{"no host", openai.Config{Name: "llama", BaseURL: "localhost:11434", Model: "m"}, "must be an http:// or https:// URL"},
		{"negative window", openai.Config{Name: "llama", BaseURL: "https://x", Model: "m", ContextWindow: -1}, "context_window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := openai.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if got, want := a.Info().Title, tt.cfg.Name; got != want {
					t.Errorf("title: got %q, want the name %q", got, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestStep_APIKey(t *testing.T) {
	// Keys in the environment are for the OpenAI client's own defaults, never for this endpoint.
	t.Setenv("OPENAI_API_KEY", "sk-from-environment")
	t.Setenv("OPENAI_ORG_ID", "org-from-environment")
	tests := []struct {
		name, key, want string
	}{
		{"none (Ollama)", "", ""},
		{"configured", "sk-configured", "Bearer sk-configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, text("Hi."))
			c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) { c.APIKey = tt.key }))
			c.MustSend("Hello")
			h := srv.headers[0]
			if got := h.Get("Authorization"); got != tt.want {
				t.Errorf("Authorization: got %q, want %q", got, tt.want)
			}
			if got := h.Get("OpenAI-Organization"); got != "" {
				t.Errorf("OpenAI-Organization: got %q, want none", got)
			}
		})
	}
}
