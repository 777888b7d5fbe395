// Building the agents of the config file: each entry made into its back end, with its
// policy and how the pages present it.

package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	a2aagent "github.com/parley-chat/parley/backend/a2a"
	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
)

// buildAgents makes the configured agents. A bad agent does not stop the others: its problem
// is returned, naming the agent and the field, for the log and the home page.
func buildAgents(cfgs []AgentConfig, getenv func(string) string, taken map[string]bool) ([]domain.Agent, []string) {
	b := BuildAgentsWith(cfgs, getenv, taken)
	return b.Agents, b.Problems
}

// Built is what the entries of the config file make: the agents, and for each by name what
// came from the very entry that made it (an entry refused, say for a name already taken,
// gives nothing to another agent).
type Built struct {
	Agents   []domain.Agent
	Policies map[string]domain.Policy       // who may use it, its approvers
	Notes    map[string]string              // the notes of the policies, to log
	Looks    map[string]domain.Presentation // how the pages present it: back end, icon, starters
	Problems []string                       // the entries refused, and why
}

// BuildAgentsWith is buildAgents, with the policy and the presentation of each agent.
func BuildAgentsWith(cfgs []AgentConfig, getenv func(string) string, taken map[string]bool) Built {
	b := Built{Policies: map[string]domain.Policy{}, Notes: map[string]string{}, Looks: map[string]domain.Presentation{}}
	for i, c := range cfgs {
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		var a domain.Agent
		p, note, err := agentPolicy(c)
		if err == nil && taken[c.Name] {
			err = errors.New("name: another agent already has this name")
		}
		if err == nil {
			a, err = buildAgent(c, getenv)
		}
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "agent ") {
				msg = fmt.Sprintf("agent %q: %s", name, msg)
			}
			b.Problems = append(b.Problems, msg)
			continue
		}
		taken[c.Name] = true
		b.Agents = append(b.Agents, a)
		b.Policies[c.Name] = p
		b.Looks[c.Name] = domain.Presentation{Kind: c.Backend, Icon: c.Icon, Starters: c.Starters}
		if note != "" {
			b.Notes[c.Name] = note
		}
	}
	return b
}

func buildAgent(c AgentConfig, getenv func(string) string) (domain.Agent, error) {
	if c.Name == "" {
		return nil, errors.New("name is required")
	}
	key := c.APIKey
	if c.APIKeyEnv != "" {
		if key = getenv(c.APIKeyEnv); key == "" {
			setting := "api_key_env"
			if c.credential != "" {
				setting = "token_env"
			}
			return nil, fmt.Errorf("%s: the environment variable %s is empty or not set", setting, c.APIKeyEnv)
		}
	}
	if c.Analyzer != "" && c.Analyzer != "builtin" && c.Analyzer != "model" {
		return nil, fmt.Errorf("analyzer: %q is not builtin or model", c.Analyzer)
	}
	if c.IntakeShare < 0 || c.IntakeShare > 1 {
		return nil, fmt.Errorf("intake_share: %v is not between 0 and 1", c.IntakeShare)
	}
	switch c.Backend {
	case "openai", "":
	case "a2a":
		if len(c.MCP) > 0 {
			return nil, errors.New("mcp: tool servers are for model-backed (openai) agents; a remote A2A agent has its own tools")
		}
		if c.Analyzer == "model" {
			return nil, errors.New(`analyzer: "model" needs a model endpoint; an a2a agent has the built-in analyzer`)
		}
		if c.CardURL == "" {
			return nil, errors.New("card_url is required for an a2a agent")
		}
		var client *http.Client
		if key != "" {
			client = &http.Client{Transport: BearerTransport{Token: key}}
		}
		return a2aagent.New(context.Background(), a2aagent.Config{Name: c.Name, Title: c.Title, Description: c.Description,
			CardURL: c.CardURL, HTTPClient: client, IdleTimeout: c.IdleTimeout.Duration, Credential: credentialOf(c)})
	case "agui":
		return aguiAgent(c, getenv)
	case "acp":
		return acpAgent(c)
	default:
		return nil, fmt.Errorf("backend: unknown back end %q (known: openai, a2a, agui, acp)", c.Backend)
	}
	cfg := openaiConfig(c, key)
	if len(c.MCP) > 0 {
		servers, err := mcpServers(c, getenv)
		if err != nil {
			return nil, err
		}
		if cfg.Tools, err = toolserver.NewPool(toolserver.Options{Agent: c.Name, Servers: servers, Logger: slog.Default()}); err != nil {
			return nil, err
		}
	}
	return openai.New(cfg)
}

// openaiConfig is the openai back end's configuration of an agent.
func openaiConfig(c AgentConfig, key string) openai.Config {
	return openai.Config{
		Name: c.Name, Title: c.Title, Description: c.Description,
		BaseURL: c.BaseURL, APIKey: key, Model: c.Model, SystemPrompt: c.SystemPrompt,
		ContextWindow: c.ContextWindow, Temperature: c.Temperature, AllowQuestions: c.Ask == nil || *c.Ask,
		IdleTimeout: c.IdleTimeout.Duration, FirstByteTimeout: c.FirstByteTimeout.Duration,
	}
}

// mcpServers makes the agent's tool servers' settings, reading bearer tokens from the environment.
func mcpServers(c AgentConfig, getenv func(string) string) ([]toolserver.ServerConfig, error) {
	out := make([]toolserver.ServerConfig, 0, len(c.MCP))
	for i, m := range c.MCP {
		name := m.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		s := toolserver.ServerConfig{Name: m.Name, Command: m.Command, Args: m.Args, Env: m.Env, Dir: m.Dir, URL: m.URL,
			Headers: m.Headers, Timeout: m.Timeout.Duration, Approve: m.Approve, ApproveTools: m.ApproveTools,
			ReadOnly: m.ReadOnly, AllowEmail: m.AllowEmail, InheritEnv: m.InheritEnv, MaxSessions: m.MaxSessions}
		if m.BearerTokenEnv != "" {
			if s.Bearer = getenv(m.BearerTokenEnv); s.Bearer == "" {
				return nil, fmt.Errorf("mcp server %q: bearer_token_env: the environment variable %s is empty or not set", name, m.BearerTokenEnv)
			}
		}
		out = append(out, s)
	}
	return out, nil
}
