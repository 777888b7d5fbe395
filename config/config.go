// Package config reads what Parley serves from its agents file (TOML) and the environment
// variables that stand for it: the agents, who may use them, their intake analyzers, and
// the [a2a], [intake] and [smtp] sections.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/intake"
	"github.com/parley-chat/parley/notify"
)

// AgentConfig is one agent of the config file. Every back end reads the fields it needs.
type AgentConfig struct {
	Name        string `toml:"name"`
	Title       string `toml:"title"`
	Description string `toml:"description"`
	// Backend is "openai" (any OpenAI-compatible chat-completions endpoint), "a2a" (a remote
	// A2A agent, found by CardURL), "agui" (an AG-UI agent, at URL) or "acp" (a coding agent
	// started as Command).
	Backend string `toml:"backend"`
	CardURL string `toml:"card_url"`
	// URL is where an AG-UI agent takes its runs; Headers go with every request to it, and
	// BearerTokenEnv names the environment variable with its bearer token. ForwardedProps
	// are passed to each of its runs; AllowEmail lets its interrupts ask for email addresses.
	URL            string            `toml:"url"`
	Headers        map[string]string `toml:"headers"`
	BearerTokenEnv string            `toml:"bearer_token_env"`
	ForwardedProps map[string]any    `toml:"forwarded_props"`
	AllowEmail     bool              `toml:"allow_email"`
	BaseURL        string            `toml:"base_url"`
	// APIKey is the key itself; APIKeyEnv names an environment variable holding it.
	APIKey        string   `toml:"api_key"`
	APIKeyEnv     string   `toml:"api_key_env"`
	Model         string   `toml:"model"`
	SystemPrompt  string   `toml:"system_prompt"`
	ContextWindow int      `toml:"context_window"`
	Temperature   *float64 `toml:"temperature"`
	// Ask says whether the agent may ask the person questions at all (default true).
	Ask *bool `toml:"ask"`
	// credential names the setting the bearer token of an A2A agent comes from, for the
	// message of a 401; credentialOf fills it in for the agents file.
	credential string
	// IdleTimeout bounds a silence in the middle of a reply ("60s"); FirstByteTimeout the
	// wait for its first byte ("5m", for a model that loads first).
	IdleTimeout      duration `toml:"idle_timeout"`
	FirstByteTimeout duration `toml:"first_byte_timeout"`
	// Analyzer is how the first message of a round is split: "builtin" (the default, offline)
	// or "model" (the agent's own endpoint, openai back end only).
	Analyzer string `toml:"analyzer"`
	// IntakeShare is the share of the context window above which a message is split (0.10).
	IntakeShare float64 `toml:"intake_share"`
	// MCP are the agent's tool servers ([[agents.mcp]]), openai back end only.
	MCP []MCPConfig `toml:"mcp"`
	// Command, Args, Env and Cwd start a coding agent (acp): its own command, run in the
	// workspace Cwd, the only place it may read and write files through Parley.
	// MaxSessions bounds its processes (one per running conversation), KeepAlive how long
	// one is kept once its turn ended, AskTimeout how long its questions wait.
	Command     string            `toml:"command"`
	Args        []string          `toml:"args"`
	Env         map[string]string `toml:"env"`
	Cwd         string            `toml:"cwd"`
	MaxSessions int               `toml:"max_sessions"`
	KeepAlive   duration          `toml:"keep_alive"`
	AskTimeout  duration          `toml:"ask_timeout"`
	// Access is who may use the agent ("everyone", "staff", "group:NAME", "person:NAME");
	// unset, everyone, or staff alone for a coding agent or one with approval-gated tools.
	Access []string `toml:"access"`
	// Approvers ("group:NAME" or "person:NAME") get the agent's approval gates instead of the
	// conversation's owner; Approvals of them must approve. ApprovalTimeout expires a gate
	// nobody acted on, and EscalateAfter puts it to EscalateTo as well.
	Approvers       string   `toml:"approvers"`
	Approvals       int      `toml:"approvals"`
	ApprovalTimeout duration `toml:"approval_timeout"`
	EscalateAfter   duration `toml:"escalate_after"`
	EscalateTo      string   `toml:"escalate_to"`
	// Icon names the icon pages draw for the agent (see docs/configuration.md);
	// Starters are messages the home page offers to begin with.
	Icon     string   `toml:"icon"`
	Starters []string `toml:"starters"`
}

// MCPConfig is one [[agents.mcp]] entry: a tool server started as a command (stdio) or
// reached at a URL (Streamable HTTP).
type MCPConfig struct {
	Name    string            `toml:"name"`
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	Dir     string            `toml:"dir"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// BearerTokenEnv names the environment variable holding the bearer token.
	BearerTokenEnv string   `toml:"bearer_token_env"`
	Timeout        duration `toml:"timeout"`
	Approve        bool     `toml:"approve"`
	ApproveTools   []string `toml:"approve_tools"`
	ReadOnly       []string `toml:"read_only"`
	AllowEmail     bool     `toml:"allow_email"`
	InheritEnv     bool     `toml:"inherit_env"`
	// MaxSessions bounds the sessions (processes, for a command) of a server that asks in
	// the middle of calls: one per call in flight.
	MaxSessions int `toml:"max_sessions"`
}

// mcpKeys are the keys an [[agents.mcp]] entry may have.
var mcpKeys = map[string]bool{"name": true, "command": true, "args": true, "env": true, "dir": true, "url": true,
	"headers": true, "bearer_token_env": true, "timeout": true, "approve": true, "approve_tools": true,
	"read_only": true, "allow_email": true, "inherit_env": true, "max_sessions": true}

// IntakeSettings is the [intake] section: how messages are analyzed for agents that say
// nothing of their own (the built-in agents, remote A2A agents).
type IntakeSettings struct {
	ContextWindow int     `toml:"context_window"`
	Share         float64 `toml:"share"`
}

// duration reads "90s" or "5m" from TOML.
type duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 90s or 5m", b)
	}
	d.Duration = v
	return nil
}

// agentKeys are the keys an [[agents]] entry may have.
var agentKeys = map[string]bool{"name": true, "title": true, "description": true, "backend": true,
	"base_url": true, "api_key": true, "api_key_env": true, "model": true, "system_prompt": true,
	"context_window": true, "temperature": true, "ask": true, "idle_timeout": true, "first_byte_timeout": true,
	"card_url": true, "analyzer": true, "intake_share": true, "mcp": true,
	"url": true, "headers": true, "bearer_token_env": true, "forwarded_props": true, "allow_email": true,
	"command": true, "args": true, "env": true, "cwd": true, "max_sessions": true, "keep_alive": true, "ask_timeout": true,
	"access": true, "approvers": true, "approvals": true, "approval_timeout": true, "escalate_after": true, "escalate_to": true,
	"icon": true, "starters": true}

// LoadAgents reads the agents from the config file (if any) and the PARLEY_OPENAI_* shortcut.
// A file that cannot be read or parsed stops the start; a bad entry is a problem of that
// agent alone (naming it and the key), and the others still serve.
func LoadAgents(path string, getenv func(string) string) ([]AgentConfig, []string, error) {
	var cfgs []AgentConfig
	var problems []string
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
		var file struct {
			Agents []map[string]any `toml:"agents"`
			A2A    A2ASettings      `toml:"a2a"`
			Intake IntakeSettings   `toml:"intake"`
			SMTP   smtpSettings     `toml:"smtp"`
		}
		md, err := toml.Decode(string(b), &file)
		if err != nil {
			var perr toml.ParseError
			if errors.As(err, &perr) {
				return nil, nil, fmt.Errorf("config %s: %s", path, perr.ErrorWithPosition())
			}
			return nil, nil, fmt.Errorf("config %s: %w", path, err)
		}
		for _, k := range md.Undecoded() {
			if len(k) == 1 {
				problems = append(problems, fmt.Sprintf("config %s: unknown section %q (agents go in [[agents]])", path, k.String()))
			}
		}
		for i, entry := range file.Agents {
			c, err := decodeAgent(entry)
			if err != nil {
				name, _ := entry["name"].(string)
				if name == "" {
					name = fmt.Sprintf("#%d", i+1)
				}
				problems = append(problems, fmt.Sprintf("agent %q: %v", name, err))
				continue
			}
			cfgs = append(cfgs, c)
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
		cfgs = append(cfgs, AgentConfig{
			Name: name, Title: model, Backend: "openai", BaseURL: base,
			APIKey: getenv("PARLEY_OPENAI_API_KEY"), Model: model,
			Description: fmt.Sprintf("%s at %s (from PARLEY_OPENAI_*).", model, base),
		})
	}
	for i, entry := range strings.Split(getenv("PARLEY_A2A_AGENTS"), ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		c, err := a2aShortcut(entry, i)
		if err != nil {
			problems = append(problems, fmt.Sprintf("PARLEY_A2A_AGENTS: entry %d: %v", i+1, err))
			continue
		}
		cfgs = append(cfgs, c)
	}
	return cfgs, problems, nil
}

// decodeAgent checks one [[agents]] entry's keys and types.
func decodeAgent(entry map[string]any) (AgentConfig, error) {
	var unknown []string
	for k := range entry {
		if !agentKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return AgentConfig{}, fmt.Errorf("unknown key %s", strings.Join(unknown, ", "))
	}
	if servers, ok := entry["mcp"]; ok {
		var list []map[string]any
		switch v := servers.(type) {
		case []map[string]any: // [[agents.mcp]] tables
			list = v
		case []any: // mcp = [{...}] inline
			for _, item := range v {
				m, ok := item.(map[string]any)
				if !ok {
					return AgentConfig{}, errors.New("mcp: each server is a table of settings")
				}
				list = append(list, m)
			}
		}
		for i, m := range list {
			for k := range m {
				if !mcpKeys[k] {
					unknown = append(unknown, fmt.Sprintf("mcp #%d: %s", i+1, k))
				}
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return AgentConfig{}, fmt.Errorf("unknown key %s", strings.Join(unknown, ", "))
		}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(entry); err != nil {
		return AgentConfig{}, err
	}
	var c AgentConfig
	if _, err := toml.Decode(buf.String(), &c); err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return c, errors.New(perr.Message)
		}
		return c, err
	}
	return c, nil
}

// LoadIntakeSettings reads the [intake] section of the config file, if there is one.
func LoadIntakeSettings(path string) (IntakeSettings, error) {
	var file struct {
		Intake IntakeSettings `toml:"intake"`
	}
	if path == "" {
		return file.Intake, nil
	}
	if _, err := toml.DecodeFile(path, &file); err != nil {
		return file.Intake, fmt.Errorf("config %s: [intake]: %w", path, err)
	}
	if s := file.Intake.Share; s < 0 || s > 1 {
		return file.Intake, fmt.Errorf("config %s: [intake] share: %v is not between 0 and 1", path, s)
	}
	return file.Intake, nil
}

// BuildAnalyzers makes each configured agent's intake analyzer, and the default one for
// every other agent: a configured agent (model-backed or A2A) splits above its own context
// window's share, the [intake] section filling in what it leaves out, with its own endpoint
// when analyzer = "model". built names the agents that could be built.
func BuildAnalyzers(cfgs []AgentConfig, built map[string]bool, settings IntakeSettings, getenv func(string) string, log *slog.Logger) (domain.Analyzer, map[string]domain.Analyzer) {
	def := intake.New(intake.Options{ContextWindow: settings.ContextWindow, Share: settings.Share, Logger: log})
	out := map[string]domain.Analyzer{}
	for _, c := range cfgs {
		if !built[c.Name] {
			continue
		}
		opts := intake.Options{ContextWindow: c.ContextWindow, Share: c.IntakeShare, Logger: log}
		if opts.ContextWindow == 0 {
			opts.ContextWindow = settings.ContextWindow
		}
		if opts.Share == 0 {
			opts.Share = settings.Share
		}
		if c.Analyzer == "model" {
			key := c.APIKey
			if c.APIKeyEnv != "" {
				key = getenv(c.APIKeyEnv)
			}
			if az, err := openai.NewAnalyzer(openaiConfig(c, key)); err == nil {
				opts.Model = az
			} else {
				log.Error("intake analyzer not available; the built-in one serves", "agent", c.Name, "error", err)
			}
		}
		out[c.Name] = intake.New(opts)
	}
	return def, out
}

// smtpSettings is the [smtp] section: the server the email channels go through.
type smtpSettings struct {
	Host        string `toml:"host"`
	Port        int    `toml:"port"`
	Username    string `toml:"username"`
	PasswordEnv string `toml:"password_env"`
	From        string `toml:"from"`
	TLS         string `toml:"tls"`
}

// LoadSMTP reads the [smtp] section of the config file: nil when there is none. The
// password comes from the environment variable password_env names.
func LoadSMTP(path string, getenv func(string) string) (*notify.SMTP, error) {
	var file struct {
		SMTP *smtpSettings `toml:"smtp"`
	}
	if path == "" {
		return nil, nil
	}
	if _, err := toml.DecodeFile(path, &file); err != nil {
		return nil, fmt.Errorf("config %s: [smtp]: %w", path, err)
	}
	if file.SMTP == nil {
		return nil, nil
	}
	c := file.SMTP
	s := &notify.SMTP{Host: c.Host, Port: c.Port, Username: c.Username, From: c.From, TLS: c.TLS}
	if s.Port == 0 {
		s.Port = 587
	}
	if c.PasswordEnv != "" {
		if s.Password = getenv(c.PasswordEnv); s.Password == "" {
			return nil, fmt.Errorf("config %s: [smtp] password_env: the environment variable %s is empty or not set", path, c.PasswordEnv)
		}
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("config %s: [smtp] %w", path, err)
	}
	return s, nil
}
