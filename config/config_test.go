package config

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

// env is an environment of the variables in m alone.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parley.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfig(t *testing.T) {
	t.Run("agents from the file", func(t *testing.T) {
		path := writeConfig(t, `
[[agents]]
name = "llama"
title = "Llama (local)"
backend = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "llama3.1"
context_window = 8192
temperature = 0.2
ask = false
idle_timeout = "90s"

[[agents]]
name = "gpt"
base_url = "https://api.openai.com/v1"
api_key_env = "MY_KEY"
model = "gpt-4o-mini"
`)
		cfgs, problems, err := LoadAgents(path, env(nil))
		if err != nil || len(problems) > 0 {
			t.Fatal(err, problems)
		}
		if len(cfgs) != 2 || cfgs[0].Model != "llama3.1" || *cfgs[0].Temperature != 0.2 || *cfgs[0].Ask || cfgs[1].APIKeyEnv != "MY_KEY" || cfgs[0].IdleTimeout.Seconds() != 90 {
			t.Fatalf("cfgs = %+v", cfgs)
		}
	})
	t.Run("env shortcut adds one agent named after the model", func(t *testing.T) {
		cfgs, _, err := LoadAgents("", env(map[string]string{"PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "PARLEY_OPENAI_MODEL": "qwen2.5"}))
		if err != nil || len(cfgs) != 1 || cfgs[0].Name != "qwen2.5" || cfgs[0].BaseURL != "http://127.0.0.1:11434/v1" {
			t.Fatalf("cfgs = %+v, %v", cfgs, err)
		}
	})
	t.Run("syntax error names the line", func(t *testing.T) {
		_, _, err := LoadAgents(writeConfig(t, "[[agents]]\nname = \"x\nmodel = 1\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("err = %v, want the line", err)
		}
	})
	t.Run("a bad entry is its own problem; the others load", func(t *testing.T) {
		cfgs, problems, err := LoadAgents(writeConfig(t, `
[[agents]]
name = "x"
modle = "y"

[[agents]]
name = "w"
context_window = "8k"

[[agents]]
name = "t"
idle_timeout = "soon"

[[agents]]
name = "ok"
model = "m"
temperature = 1
`), env(nil))
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(problems, "\n")
		for _, want := range []string{`agent "x": unknown key modle`, `agent "w": `, "context_window", `agent "t": `, "soon"} {
			if !strings.Contains(all, want) {
				t.Errorf("problems lack %q:\n%s", want, all)
			}
		}
		if len(cfgs) != 1 || cfgs[0].Name != "ok" || *cfgs[0].Temperature != 1 {
			t.Fatalf("cfgs = %+v, want only ok", cfgs)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, _, err := LoadAgents(filepath.Join(t.TempDir(), "nope.toml"), env(nil)); err == nil {
			t.Fatal("want an error")
		}
	})
}

func TestBuildAgents_BadAgentsAreReportedOthersServe(t *testing.T) {
	cfgs, _, err := LoadAgents(writeConfig(t, `
[[agents]]
name = "good"
base_url = "http://127.0.0.1:1/v1"
model = "m"

[[agents]]
name = "nomodel"
base_url = "http://127.0.0.1:1/v1"

[[agents]]
name = "weird"
backend = "carrier-pigeon"
model = "m"

[[agents]]
name = "nokey"
base_url = "http://127.0.0.1:1/v1"
model = "m"
api_key_env = "UNSET_KEY"

[[agents]]
name = "event-planner"
base_url = "http://127.0.0.1:1/v1"
model = "m"
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	agents, problems := buildAgents(cfgs, env(nil), map[string]bool{"event-planner": true})
	if len(agents) != 1 || agents[0].Info().Name != "good" {
		t.Fatalf("agents = %v, want only good", agents)
	}
	if strings.Count(strings.Join(problems, "\n"), `agent "nomodel"`) != 1 {
		t.Errorf("the agent is named more than once: %v", problems)
	}
	want := []string{`agent "nomodel": `, "model", `agent "weird": backend`, "carrier-pigeon", `agent "nokey": api_key_env`, "UNSET_KEY", `agent "event-planner": name`}
	all := strings.Join(problems, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
}

func TestLoadConfig_A2AAgents(t *testing.T) {
	cfgs, _, err := LoadAgents(writeConfig(t, `
[[agents]]
name = "remote"
backend = "a2a"
card_url = "http://127.0.0.1:9/agents/ops"

[[agents]]
name = "nocard"
backend = "a2a"
`), env(map[string]string{"PARLEY_A2A_AGENTS": "http://10.0.0.5:8000/, https://agents.example/planner/.well-known/agent-card.json"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 4 || cfgs[2].Name != "a2a-10-0-0-5-8000" || cfgs[3].Name != "a2a-agents-example-planner" || cfgs[3].Backend != "a2a" {
		t.Fatalf("cfgs = %+v", cfgs)
	}
	agents, problems := buildAgents(cfgs, env(nil), map[string]bool{})
	if len(agents) != 3 {
		t.Fatalf("agents = %d, want 3 (a remote agent that is down still starts)", len(agents))
	}
	if len(problems) != 1 || !strings.Contains(problems[0], `agent "nocard": card_url`) {
		t.Fatalf("problems = %v", problems)
	}
}

func TestLoadConfig_AGUIAgents(t *testing.T) {
	cfgs, problems, err := LoadAgents(writeConfig(t, `
[[agents]]
name = "research"
title = "Research assistant"
backend = "agui"
url = "http://127.0.0.1:9/agent"
headers = { "X-Team" = "infra" }
bearer_token_env = "RESEARCH_TOKEN"
forwarded_props = { graph = "main" }

[[agents]]
name = "nourl"
backend = "agui"

[[agents]]
name = "badurl"
backend = "agui"
url = "ftp://example.com/agent"

[[agents]]
name = "notoken"
backend = "agui"
url = "http://127.0.0.1:9/agent"
bearer_token_env = "UNSET_TOKEN"

[[agents]]
name = "typo"
backend = "agui"
urll = "http://127.0.0.1:9/agent"
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 4 || cfgs[0].Headers["X-Team"] != "infra" || cfgs[0].ForwardedProps["graph"] != "main" {
		t.Fatalf("cfgs = %+v", cfgs)
	}
	agents, built := buildAgents(cfgs, env(map[string]string{"RESEARCH_TOKEN": "t0k"}), map[string]bool{})
	problems = append(problems, built...)
	if len(agents) != 1 || agents[0].Info().Title != "Research assistant" {
		t.Fatalf("agents = %v, want research (an agent that is down still starts)", agents)
	}
	all := strings.Join(problems, "\n")
	for _, w := range []string{`agent "nourl": url is required`, `agent "badurl": url: "ftp://example.com/agent"`,
		`agent "notoken": bearer_token_env: the environment variable UNSET_TOKEN`, `agent "typo": unknown key urll`} {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
}

func TestLoadConfig_CodingAgents(t *testing.T) {
	work := t.TempDir()
	cfgs, problems, err := LoadAgents(writeConfig(t, `
[[agents]]
name = "coder"
title = "Coding agent"
backend = "acp"
command = "npx"
args = ["@zed-industries/claude-agent-acp"]
cwd = "`+work+`"
env = { ANTHROPIC_API_KEY_FILE = "/etc/parley/key" }
max_sessions = 2
keep_alive = "2m"
ask_timeout = "30m"

[[agents]]
name = "nocmd"
backend = "acp"
cwd = "`+work+`"

[[agents]]
name = "nocwd"
backend = "acp"
command = "gemini"

[[agents]]
name = "relative"
backend = "acp"
command = "gemini"
cwd = "srv/app"

[[agents]]
name = "missing"
backend = "acp"
command = "gemini"
cwd = "`+work+`/nowhere"

[[agents]]
name = "toomany"
backend = "acp"
command = "gemini"
cwd = "`+work+`"
max_sessions = 1000

[[agents]]
name = "withurl"
backend = "acp"
command = "gemini"
cwd = "`+work+`"
url = "http://127.0.0.1:9/agent"
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c := cfgs[0]; c.Command != "npx" || len(c.Args) != 1 || c.Env["ANTHROPIC_API_KEY_FILE"] == "" || c.MaxSessions != 2 || c.KeepAlive.Duration != 2*time.Minute || c.AskTimeout.Duration != 30*time.Minute {
		t.Fatalf("cfg = %+v", c)
	}
	agents, built := buildAgents(cfgs, env(nil), map[string]bool{})
	problems = append(problems, built...)
	if len(agents) != 1 || agents[0].Info().Title != "Coding agent" {
		t.Fatalf("agents = %v, want coder (nothing starts before the first message)", agents)
	}
	all := strings.Join(problems, "\n")
	for _, w := range []string{`agent "nocmd": command is required`, `agent "nocwd": cwd is required`,
		`agent "relative": cwd "srv/app" must be an absolute path`, `agent "missing": cwd: stat`,
		`agent "toomany": max_sessions must be between 1 and 64`, `agent "withurl": url, base_url and card_url are not for an acp agent`} {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
}

func TestLoadA2ASettings(t *testing.T) {
	path := writeConfig(t, "[a2a]\nstructured_output = true\n\n[[agents]]\nname = \"m\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:1/v1\"\n")
	s, err := LoadA2ASettings(path)
	if err != nil || !s.StructuredOutput {
		t.Fatalf("settings = %+v, %v", s, err)
	}
	if _, problems, err := LoadAgents(path, env(nil)); err != nil || len(problems) != 0 {
		t.Fatalf("the [a2a] section is reported: %v %v", problems, err)
	}
}

func TestBuildAnalyzers(t *testing.T) {
	path := writeConfig(t, `
[intake]
context_window = 20000
share = 0.05

[[agents]]
name = "qwen"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5"
context_window = 32768
intake_share = 0.2

[[agents]]
name = "ops"
backend = "a2a"
card_url = "http://10.0.0.5:8000"
intake_share = 0.01

[[agents]]
name = "broken"
backend = "a2a"
card_url = "http://10.0.0.6:8000"
analyzer = "model"
`)
	cfgs, _, err := LoadAgents(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	settings, err := LoadIntakeSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	def, per := BuildAnalyzers(cfgs, map[string]bool{"qwen": true, "ops": true}, settings, env(nil), slog.New(slog.DiscardHandler))
	threshold := func(az domain.Analyzer) int {
		t.Helper()
		a, err := az.Analyze(context.Background(), "hello")
		if err != nil {
			t.Fatal(err)
		}
		return a.Threshold
	}
	if got := threshold(def); got != 1000 {
		t.Errorf("default threshold %d, want 20000 × 0.05", got)
	}
	if got := threshold(per["qwen"]); got != 6553 {
		t.Errorf("qwen threshold %d, want 32768 × 0.2", got)
	}
	if got := threshold(per["ops"]); got != 200 {
		t.Errorf("a2a agent threshold %d, want the [intake] window × its own share 0.01", got)
	}
	if _, ok := per["broken"]; ok {
		t.Error("an agent that was not built has an analyzer")
	}
	_, err = buildAgent(cfgs[2], env(nil))
	if err == nil || !strings.Contains(err.Error(), `analyzer: "model" needs a model endpoint`) {
		t.Errorf("a2a agent with analyzer = model: %v", err)
	}
}

func TestToolServersFromTheConfigFile(t *testing.T) {
	path := writeConfig(t, `
[[agents]]
name = "helper"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5"

  [[agents.mcp]]
  name = "files"
  command = "/usr/local/bin/files-mcp"
  args = ["--root", "/srv"]
  env = { LOG = "debug" }
  dir = "/srv"
  approve = true
  read_only = ["list_files"]
  max_sessions = 4

  [[agents.mcp]]
  name = "tickets"
  url = "https://tickets.example.com/mcp"
  headers = { "X-Team" = "infra" }
  bearer_token_env = "TICKETS_TOKEN"
  approve_tools = ["close_ticket"]
  timeout = "30s"

[[agents]]
name = "typo"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5"
  [[agents.mcp]]
  name = "x"
  comand = "oops"

[[agents]]
name = "greedy"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5"
  [[agents.mcp]]
  name = "ref"
  command = "npx"
  max_sessions = -1
`)
	cfgs, problems, err := LoadAgents(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], `agent "typo": unknown key mcp #1: comand`) {
		t.Errorf("problems = %q", problems)
	}
	if len(cfgs) != 2 || len(cfgs[0].MCP) != 2 {
		t.Fatalf("cfgs = %+v", cfgs)
	}
	files, tickets := cfgs[0].MCP[0], cfgs[0].MCP[1]
	if files.Command != "/usr/local/bin/files-mcp" || files.Args[1] != "/srv" || files.Env["LOG"] != "debug" || !files.Approve || files.ReadOnly[0] != "list_files" || files.MaxSessions != 4 {
		t.Errorf("files = %+v", files)
	}
	if tickets.URL != "https://tickets.example.com/mcp" || tickets.Headers["X-Team"] != "infra" || tickets.Timeout.Seconds() != 30 {
		t.Errorf("tickets = %+v", tickets)
	}
	_, problems = buildAgents(cfgs, env(nil), map[string]bool{})
	if len(problems) != 2 || !strings.Contains(problems[0], `agent "helper": mcp server "tickets": bearer_token_env: the environment variable TICKETS_TOKEN is empty or not set`) {
		t.Errorf("without the token: %q", problems)
	}
	agents, problems := buildAgents(cfgs, env(map[string]string{"TICKETS_TOKEN": "t0k"}), map[string]bool{})
	if len(problems) != 1 || !strings.Contains(problems[0], `agent "greedy": mcp server "ref": max_sessions must be between 1 and 256`) || len(agents) != 1 {
		t.Fatalf("agents %d, problems %q", len(agents), problems)
	}
}

// An entry's icon and starters reach the pages with its back end; an entry without them
// presents nothing of its own; an entry refused (its name taken, here a built-in agent's
// or an earlier entry's) changes nothing of the agent that has the name.
func TestPresentations(t *testing.T) {
	cfgs, problems, err := LoadAgents(writeConfig(t, `
[[agents]]
name = "support"
base_url = "http://127.0.0.1:1/v1"
model = "m"
icon = "circle-help"
starters = ["Why was I charged twice?", "Reset my password"]

[[agents]]
name = "plain"
backend = "a2a"
card_url = "http://127.0.0.1:1/.well-known/agent-card.json"

[[agents]]
name = "support"
base_url = "http://127.0.0.1:1/v1"
model = "m"
icon = "bot"
starters = ["Another agent's"]

[[agents]]
name = "event-planner"
base_url = "http://127.0.0.1:1/v1"
model = "m"
icon = "bot"
starters = ["Not the planner's"]
`), func(string) string { return "" })
	if err != nil || len(problems) > 0 {
		t.Fatalf("LoadAgents: %v %v", err, problems)
	}
	b := BuildAgentsWith(cfgs, func(string) string { return "" }, map[string]bool{"event-planner": true})
	if len(b.Agents) != 2 || len(b.Problems) != 2 {
		t.Fatalf("built %d agents, problems %q; want support and plain, two refused", len(b.Agents), b.Problems)
	}
	if p := b.Looks["support"]; p.Icon != "circle-help" || len(p.Starters) != 2 || p.Starters[1] != "Reset my password" {
		t.Errorf("support presents %+v", p)
	}
	if p := b.Looks["plain"]; p.Kind != "a2a" || p.Icon != "" || p.Starters != nil {
		t.Errorf("plain presents %+v", p)
	}
	if p, ok := b.Looks["event-planner"]; ok {
		t.Errorf("a refused entry presents the built-in planner: %+v", p)
	}
}
