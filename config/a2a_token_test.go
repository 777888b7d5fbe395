package config

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/parley-chat/parley/backend/backendtest"
)

// tokenAgent is a remote A2A agent that wants the bearer token "right": it answers a message
// with one agent message, and anything without the token with 401.
func tokenAgent(t *testing.T) (url string, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var auth []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer right" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="peer"`)
			http.Error(w, `{"error":"a bearer token is required"}`, http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"name":"Peer","description":"A peer.","url":%q,"version":"1","protocolVersion":"0.3.0","preferredTransport":"JSONRPC",
				"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`, srv.URL+"/rpc")
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"message\",\"messageId\":\"m1\",\"role\":\"agent\",\"parts\":[{\"kind\":\"text\",\"text\":\"Hello from the peer.\"}]}}\n\n", req.ID)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), auth...) }
}

func TestA2AShortcutCarriesATokenPerAgent(t *testing.T) {
	url, seen := tokenAgent(t)
	for _, tt := range []struct {
		name, entry string
		vars        map[string]string
		fault       string // "" when the agent answers
	}{
		{"token_env", url + " token_env=PEER_TOKEN", map[string]string{"PEER_TOKEN": "right"}, ""},
		{"token", url + "  token=right", nil, ""},
		{"wrong token_env", url + " token_env=PEER_TOKEN", map[string]string{"PEER_TOKEN": "wrong"},
			"check the bearer token set by the environment variable PEER_TOKEN (token_env in PARLEY_A2A_AGENTS)"},
		{"none", url, nil, "add token_env=VARIABLE after the agent's URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"PARLEY_A2A_AGENTS": "http://10.0.0.5:8000/, " + tt.entry}
			for k, v := range tt.vars {
				vars[k] = v
			}
			cfgs, problems, err := LoadAgents("", env(vars))
			if err != nil || len(problems) != 0 || len(cfgs) != 2 || cfgs[1].CardURL != url {
				t.Fatalf("LoadAgents: %+v %v %v", cfgs, problems, err)
			}
			agents, problems := buildAgents(cfgs[1:], env(vars), map[string]bool{})
			if len(agents) != 1 || len(problems) != 0 {
				t.Fatalf("buildAgents: %d agents, problems %v", len(agents), problems)
			}
			before := len(seen())
			rec, err := backendtest.NewConvo(t, agents[0]).Send("Hi")
			switch {
			case tt.fault == "" && err != nil:
				t.Fatalf("send: %v", err)
			case tt.fault == "" && strings.Join(rec.Messages(), "") != "Hello from the peer.":
				t.Errorf("messages: %q", rec.Messages())
			case tt.fault != "" && (err == nil || !strings.Contains(err.Error(), tt.fault) || !strings.Contains(err.Error(), "401")):
				t.Errorf("error: got %v, want HTTP 401 and %q", err, tt.fault)
			}
			for _, a := range seen()[before:] {
				if want := "Bearer " + map[bool]string{true: "right", false: tt.vars["PEER_TOKEN"]}[tt.name == "token"]; tt.name != "none" && a != want {
					t.Errorf("the agent got Authorization %q, want %q", a, want)
				}
			}
		})
	}
}

func TestA2AShortcutMistakes(t *testing.T) {
	for entry, want := range map[string]string{
		"http://a.example token_env=":            "want token_env=VARIABLE or token=VALUE",
		"http://a.example bearer=x":              `unknown option "bearer"`,
		"http://a.example token=x token_env=Y":   "one token per agent",
		"http://a.example/x token_env=NOT_SET_X": "",
	} {
		cfgs, problems, err := LoadAgents("", env(map[string]string{"PARLEY_A2A_AGENTS": entry}))
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			_, problems = buildAgents(cfgs, env(nil), map[string]bool{})
			want = "token_env: the environment variable NOT_SET_X is empty or not set"
		}
		if len(problems) != 1 || !strings.Contains(problems[0], want) {
			t.Errorf("%q: problems %v, want %q", entry, problems, want)
		}
	}
}
