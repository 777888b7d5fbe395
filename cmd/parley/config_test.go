package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

[[agents]]
name = "gpt"
base_url = "https://api.openai.com/v1"
api_key_env = "MY_KEY"
model = "gpt-4o-mini"
`)
		cfgs, err := loadConfig(path, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if len(cfgs) != 2 || cfgs[0].Model != "llama3.1" || *cfgs[0].Temperature != 0.2 || *cfgs[0].Ask || cfgs[1].APIKeyEnv != "MY_KEY" {
			t.Fatalf("cfgs = %+v", cfgs)
		}
	})
	t.Run("env shortcut adds one agent named after the model", func(t *testing.T) {
		cfgs, err := loadConfig("", env(map[string]string{"PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "PARLEY_OPENAI_MODEL": "qwen2.5"}))
		if err != nil || len(cfgs) != 1 || cfgs[0].Name != "qwen2.5" || cfgs[0].BaseURL != "http://127.0.0.1:11434/v1" {
			t.Fatalf("cfgs = %+v, %v", cfgs, err)
		}
	})
	t.Run("syntax error names the line", func(t *testing.T) {
		_, err := loadConfig(writeConfig(t, "[[agents]]\nname = \"x\nmodel = 1\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("err = %v, want the line", err)
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		_, err := loadConfig(writeConfig(t, "[[agents]]\nname = \"x\"\nmodle = \"y\"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), "modle") {
			t.Fatalf("err = %v, want the unknown key named", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := loadConfig(filepath.Join(t.TempDir(), "nope.toml"), env(nil)); err == nil {
			t.Fatal("want an error")
		}
	})
}

func TestBuildAgents_BadAgentsAreReportedOthersServe(t *testing.T) {
	cfgs, err := loadConfig(writeConfig(t, `
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
	want := []string{`agent "nomodel": `, "model", `agent "weird": backend`, "carrier-pigeon", `agent "nokey": api_key_env`, "UNSET_KEY", `agent "event-planner": name`}
	all := strings.Join(problems, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
}
