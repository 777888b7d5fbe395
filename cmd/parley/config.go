package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/agent/openai"
)

// AgentConfig is one agent of the config file. Every back end reads the fields it needs.
type AgentConfig struct {
	Name        string `toml:"name"`
	Title       string `toml:"title"`
	Description string `toml:"description"`
	// Backend is "openai" (any OpenAI-compatible chat-completions endpoint).
	Backend string `toml:"backend"`
	BaseURL string `toml:"base_url"`
	// APIKey is the key itself; APIKeyEnv names an environment variable holding it.
	APIKey        string   `toml:"api_key"`
	APIKeyEnv     string   `toml:"api_key_env"`
	Model         string   `toml:"model"`
	SystemPrompt  string   `toml:"system_prompt"`
	ContextWindow int      `toml:"context_window"`
	Temperature   *float64 `toml:"temperature"`
	// Ask says whether the agent may ask the person questions at all (default true).
	Ask *bool `toml:"ask"`
}

// FileConfig is the whole config file.
type FileConfig struct {
	Agents []AgentConfig `toml:"agents"`
}

// loadConfig reads the agents from the config file (if any) and the PARLEY_OPENAI_* shortcut.
// A file that cannot be read or parsed is an error; a bad agent is reported by agentError.
func loadConfig(path string, getenv func(string) string) ([]AgentConfig, error) {
	var fc FileConfig
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		md, err := toml.Decode(string(b), &fc)
		if err != nil {
			var perr toml.ParseError
			if errors.As(err, &perr) {
				return nil, fmt.Errorf("config %s: %s", path, perr.ErrorWithPosition())
			}
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		if undec := md.Undecoded(); len(undec) > 0 {
			keys := make([]string, len(undec))
			for i, k := range undec {
				keys[i] = k.String()
			}
			return nil, fmt.Errorf("config %s: unknown keys: %s", path, strings.Join(keys, ", "))
		}
	}
	if model := getenv("PARLEY_OPENAI_MODEL"); model != "" || getenv("PARLEY_OPENAI_BASE_URL") != "" {
		base := getenv("PARLEY_OPENAI_BASE_URL")
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		name := model
		if name == "" {
			name = "PARLEY_OPENAI_MODEL"
		}
		fc.Agents = append(fc.Agents, AgentConfig{
			Name: name, Title: model, Backend: "openai", BaseURL: base,
			APIKey: getenv("PARLEY_OPENAI_API_KEY"), Model: model,
			Description: fmt.Sprintf("%s at %s (from PARLEY_OPENAI_*).", model, base),
		})
	}
	return fc.Agents, nil
}

// buildAgents makes the configured agents. A bad agent does not stop the others: its problem
// is returned, naming the agent and the field, for the log and the home page.
func buildAgents(cfgs []AgentConfig, getenv func(string) string, taken map[string]bool) ([]agent.Agent, []string) {
	var agents []agent.Agent
	var problems []string
	for i, c := range cfgs {
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		a, err := buildAgent(c, getenv)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("agent %q: %v", name, err))
		case taken[c.Name]:
			problems = append(problems, fmt.Sprintf("agent %q: name: another agent already has this name", name))
		default:
			taken[c.Name] = true
			agents = append(agents, a)
		}
	}
	return agents, problems
}

func buildAgent(c AgentConfig, getenv func(string) string) (agent.Agent, error) {
	if c.Name == "" {
		return nil, errors.New("name is required")
	}
	switch c.Backend {
	case "openai", "":
	default:
		return nil, fmt.Errorf("backend: unknown back end %q (known: openai)", c.Backend)
	}
	key := c.APIKey
	if c.APIKeyEnv != "" {
		if key = getenv(c.APIKeyEnv); key == "" {
			return nil, fmt.Errorf("api_key_env: the environment variable %s is empty or not set", c.APIKeyEnv)
		}
	}
	ask := c.Ask == nil || *c.Ask
	return openai.New(openai.Config{
		Name: c.Name, Title: c.Title, Description: c.Description,
		BaseURL: c.BaseURL, APIKey: key, Model: c.Model, SystemPrompt: c.SystemPrompt,
		ContextWindow: c.ContextWindow, Temperature: c.Temperature, AllowQuestions: ask,
	})
}
