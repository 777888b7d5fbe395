package config

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/parley-chat/parley/backend/acp"
	"github.com/parley-chat/parley/backend/agui"
	"github.com/parley-chat/parley/domain"
)

// The agents that run elsewhere: remote A2A agents (the PARLEY_A2A_AGENTS shortcut, the
// [a2a] section, their bearer tokens), AG-UI agents, and coding agents (ACP) run as
// processes of their own.

// BearerTransport sends the agent's API key as a bearer token to a remote A2A agent.
type BearerTransport struct{ Token string }

// RoundTrip implements http.RoundTripper.
func (b BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return http.DefaultTransport.RoundTrip(r)
}

// a2aShortcut reads one entry of PARLEY_A2A_AGENTS: a card URL, then optionally its bearer
// token, named as token_env=VARIABLE (read from the environment) or given as token=VALUE.
func a2aShortcut(entry string, i int) (AgentConfig, error) {
	words := strings.Fields(entry)
	c := AgentConfig{Name: a2aName(words[0], i), Backend: "a2a", CardURL: words[0],
		credential: "PARLEY_A2A_AGENTS (add token_env=VARIABLE after the agent's URL)"}
	for _, w := range words[1:] {
		key, value, _ := strings.Cut(w, "=")
		switch {
		case value == "":
			return c, fmt.Errorf("%q: want token_env=VARIABLE or token=VALUE after the URL", w)
		case key == "token_env" && c.APIKeyEnv == "" && c.APIKey == "":
			c.APIKeyEnv = value
			c.credential = "the environment variable " + value + " (token_env in PARLEY_A2A_AGENTS)"
		case key == "token" && c.APIKeyEnv == "" && c.APIKey == "":
			c.APIKey = value
			c.credential = "the token= of " + words[0] + " in PARLEY_A2A_AGENTS"
		case key == "token" || key == "token_env":
			return c, errors.New("one token per agent: token_env or token")
		default:
			return c, fmt.Errorf("unknown option %q (known: token_env, token)", key)
		}
	}
	return c, nil
}

// a2aName names a remote A2A agent of PARLEY_A2A_AGENTS after its card URL's host and path.
func a2aName(u string, i int) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Host == "" {
		return fmt.Sprintf("a2a-%d", i+1)
	}
	slug := strings.Trim(strings.NewReplacer("/.well-known/agent-card.json", "", "/", "-", ":", "-", ".", "-").Replace(parsed.Host+parsed.Path), "-")
	return "a2a-" + slug
}

// A2ASettings is the [a2a] section: settings of Parley's own A2A server.
type A2ASettings struct {
	// StructuredOutput sends final results as a DataPart (also ENABLE_STRUCTURED_OUTPUT=true).
	StructuredOutput bool `toml:"structured_output"`
}

// LoadA2ASettings reads the [a2a] section of the config file, if there is one.
func LoadA2ASettings(path string) (A2ASettings, error) {
	var file struct {
		A2A A2ASettings `toml:"a2a"`
	}
	if path == "" {
		return file.A2A, nil
	}
	if _, err := toml.DecodeFile(path, &file); err != nil {
		return file.A2A, fmt.Errorf("config %s: [a2a]: %w", path, err)
	}
	return file.A2A, nil
}

// aguiAgent makes an AG-UI agent of the entry, naming the field that is wrong.
func aguiAgent(c AgentConfig, getenv func(string) string) (domain.Agent, error) {
	switch {
	case len(c.MCP) > 0:
		return nil, errors.New("mcp: tool servers are for model-backed (openai) agents; an AG-UI agent has its own tools")
	case c.Analyzer == "model":
		return nil, errors.New(`analyzer: "model" needs a model endpoint; an agui agent has the built-in analyzer`)
	case c.URL == "":
		return nil, errors.New("url is required for an agui agent (where it takes its runs, such as http://127.0.0.1:8000/agent)")
	}
	if _, ok := domain.WebURL(c.URL); !ok {
		return nil, fmt.Errorf("url: %q is not an http:// or https:// URL", c.URL)
	}
	cfg := agui.Config{Name: c.Name, Title: c.Title, Description: c.Description, URL: c.URL, Headers: c.Headers,
		ForwardedProps: c.ForwardedProps, AllowEmail: c.AllowEmail, IdleTimeout: c.IdleTimeout.Duration}
	if c.BearerTokenEnv != "" {
		if cfg.BearerToken = getenv(c.BearerTokenEnv); cfg.BearerToken == "" {
			return nil, fmt.Errorf("bearer_token_env: the environment variable %s is empty or not set", c.BearerTokenEnv)
		}
		cfg.Credential = fmt.Sprintf("the environment variable %s (bearer_token_env of agent %q)", c.BearerTokenEnv, c.Name)
	}
	return agui.New(context.Background(), cfg)
}

// credentialOf names where an A2A agent's bearer token is set, for the message of a 401.
func credentialOf(c AgentConfig) string {
	switch {
	case c.credential != "":
		return c.credential
	case c.APIKeyEnv != "":
		return fmt.Sprintf("the environment variable %s (api_key_env of agent %q)", c.APIKeyEnv, c.Name)
	case c.APIKey != "":
		return fmt.Sprintf("api_key of agent %q", c.Name)
	}
	return fmt.Sprintf("api_key_env of agent %q in the agents file", c.Name)
}

// acpAgent makes a coding agent of the entry, naming the field that is wrong.
func acpAgent(c AgentConfig) (domain.Agent, error) {
	switch {
	case len(c.MCP) > 0:
		return nil, errors.New("mcp: tool servers are for model-backed (openai) agents; a coding agent has its own")
	case c.Analyzer == "model":
		return nil, errors.New(`analyzer: "model" needs a model endpoint; an acp agent has the built-in analyzer`)
	case c.URL != "" || c.BaseURL != "" || c.CardURL != "":
		return nil, errors.New("url, base_url and card_url are not for an acp agent: it runs as command, on this machine")
	}
	return acp.New(acp.Config{Name: c.Name, Title: c.Title, Description: c.Description, Command: c.Command, Args: c.Args,
		Env: c.Env, Cwd: c.Cwd, MaxSessions: c.MaxSessions, IdleAfter: c.KeepAlive.Duration, AskTimeout: c.AskTimeout.Duration,
		AllowEmail: c.AllowEmail, IdleTimeout: c.IdleTimeout.Duration})
}
