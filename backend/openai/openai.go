// Package openai is the back end for agents served by any OpenAI-compatible chat-completions
// endpoint (OpenAI, Ollama, vLLM, llama.cpp's server, ...). It streams the model's replies,
// offers the model a request_user_input tool that becomes a Parley form, teaches models
// without tool calling the UserInputMetaData format, and reads a structured final response.
// When the person's messages list documents, the model may read them with read_document,
// which the agent answers itself. Analyzer is intake's model-backed splitter on the same
// kind of endpoint.
//
// The agent keeps nothing between steps: each step rebuilds the conversation for the model
// from the event log (see history.go), so waiting for a person costs no goroutine and no
// timeout, and a restart in between loses nothing.
package openai

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
)

// Defaults for the zero values of Config.
const (
	DefaultContextWindow = 8192
	DefaultIdleTimeout   = 60 * time.Second
	// DefaultFirstByteTimeout allows for a model that loads, or reads a long prompt, first.
	DefaultFirstByteTimeout = 5 * time.Minute
)

// Config describes one model-backed agent, as an operator declares it.
type Config struct {
	// Name identifies the agent in URLs and the ledger; Title is what people read (Name when empty).
	Name, Title, Description string
	// BaseURL is the endpoint's API root, such as https://api.openai.com/v1 or
	// http://localhost:11434/v1; chat/completions is appended. APIKey may be empty (Ollama).
	BaseURL, APIKey, Model string
	// SystemPrompt comes first in the system message; Parley appends how to ask and answer.
	SystemPrompt string
	// ContextWindow is the model's context in tokens; 0 means DefaultContextWindow.
	ContextWindow int
	// Temperature is sent only when set.
	Temperature *float64
	// AllowQuestions offers the request_user_input tool and teaches the form formats.
	AllowQuestions bool
	// IdleTimeout is how long a stream may send nothing before it counts as stalled;
	// 0 means DefaultIdleTimeout. There is no limit on a whole reply.
	IdleTimeout time.Duration
	// FirstByteTimeout is how long the endpoint may take before the first byte of its reply;
	// 0 means DefaultFirstByteTimeout.
	FirstByteTimeout time.Duration
	// HTTPClient is used for every request; nil means a client without any timeout.
	HTTPClient *http.Client
	// Tools are the agent's tool servers (MCP), started and stopped by the caller.
	Tools *toolserver.Pool
}

// Agent is a domain.Agent backed by an OpenAI-compatible chat-completions endpoint.
type Agent struct {
	cfg  Config
	info domain.Info
	// endpoint is the base URL as shown in errors, without credentials.
	endpoint string
	chat     *chatClient
}

// New checks cfg and returns the agent. Errors name the agent and the config field.
func New(cfg Config) (*Agent, error) {
	cfg.Name = strings.TrimSpace(cfg.Name)
	cfg.Model = strings.TrimSpace(cfg.Model)
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	if cfg.Name == "" {
		return nil, errors.New("openai agent: name is required")
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("agent %q: model is required", cfg.Name)
	}
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("agent %q: base_url is required", cfg.Name)
	}
	u, ok := domain.WebURL(cfg.BaseURL)
	if !ok {
		return nil, fmt.Errorf("agent %q: base_url %q must be an http:// or https:// URL", cfg.Name, cfg.BaseURL)
	}
	if cfg.ContextWindow < 0 {
		return nil, fmt.Errorf("agent %q: context_window must not be negative", cfg.Name)
	}
	if cfg.ContextWindow == 0 {
		cfg.ContextWindow = DefaultContextWindow
	}
	if cfg.FirstByteTimeout <= 0 {
		cfg.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Title == "" {
		cfg.Title = cfg.Name
	}
	client := cfg.HTTPClient
	if client == nil {
		// No Timeout: a long reply is fine as long as it keeps coming (see IdleTimeout).
		client = &http.Client{}
	}
	// The client does not retry: faults surface at once, as an error the person can retry.
	chat, err := newChatClient(cfg.BaseURL, cfg.APIKey, client)
	if err != nil {
		return nil, fmt.Errorf("agent %q: base_url %q: %w", cfg.Name, cfg.BaseURL, err)
	}
	return &Agent{
		cfg: cfg,
		info: domain.Info{Name: cfg.Name, Title: cfg.Title, Description: cfg.Description,
			NoForms: !cfg.AllowQuestions, Cancels: true},
		endpoint: u.Redacted(),
		chat:     chat,
	}, nil
}

// Tools are the agent's tool servers, nil when it has none: the caller starts and closes them.
func (a *Agent) Tools() *toolserver.Pool { return a.cfg.Tools }

// Info describes the agent in the agent picker.
func (a *Agent) Info() domain.Info { return a.info }
