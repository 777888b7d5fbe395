package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestAgentPolicies(t *testing.T) {
	work := t.TempDir()
	cfgs, problems, err := LoadAgents(writeConfig(t, `
[[agents]]
name = "chat"
model = "m"
base_url = "http://127.0.0.1:1/v1"

[[agents]]
name = "deploy"
model = "m"
base_url = "http://127.0.0.1:1/v1"
[[agents.mcp]]
name = "k8s"
command = "k8s-mcp"
approve_tools = ["rollout"]

[[agents]]
name = "deploy-ops"
model = "m"
base_url = "http://127.0.0.1:1/v1"
access = ["group:ops", "person:ann"]
approvers = "group:ops"
approvals = 2
approval_timeout = "4h"
escalate_after = "30m"
escalate_to = "group:leads"
[[agents.mcp]]
name = "k8s"
command = "k8s-mcp"
approve = true

[[agents]]
name = "coder"
backend = "acp"
command = "gemini"
cwd = "`+work+`"

[[agents]]
name = "open-coder"
backend = "acp"
command = "gemini"
cwd = "`+work+`"
access = ["everyone"]
approvers = "person:lead"

[[agents]]
name = "badaccess"
model = "m"
base_url = "http://127.0.0.1:1/v1"
access = ["admins"]

[[agents]]
name = "nogates"
model = "m"
base_url = "http://127.0.0.1:1/v1"
approvers = "group:ops"

[[agents]]
name = "twoofone"
backend = "acp"
command = "gemini"
cwd = "`+work+`"
approvers = "person:lead"
approvals = 2

[[agents]]
name = "deploy-ops"
model = "m"
base_url = "http://127.0.0.1:1/v1"

[[agents]]
name = "halfescalation"
backend = "acp"
command = "gemini"
cwd = "`+work+`"
approvers = "group:ops"
escalate_after = "1h"
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	b := BuildAgentsWith(cfgs, env(nil), map[string]bool{})
	policies, notes := b.Policies, b.Notes
	problems = append(problems, b.Problems...)
	all := strings.Join(problems, "\n")
	// A second entry of a name is refused, and its access does not stand for the first's.
	for _, w := range []string{`agent "deploy-ops": name: another agent already has this name`,
		`agent "badaccess": access "admins": use "everyone"`, `agent "nogates": approvers: the agent has no approval gates`,
		`agent "twoofone": approvals = 2 needs approvers = "group:NAME"`, `agent "halfescalation": escalate_after and escalate_to go together`} {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
	want := map[string]domain.Policy{
		"chat":   {Access: domain.Everyone},
		"deploy": {Access: domain.StaffOnly},
		"deploy-ops": {Access: domain.Access{"group:ops", "person:ann"}, Approvers: domain.Audience{Group: "ops"}, Approvals: 2, Timeout: 4 * time.Hour,
			Escalate: &domain.Escalation{After: 30 * time.Minute, To: "group:leads"}},
		"coder":      {Access: domain.StaffOnly},
		"open-coder": {Access: domain.Everyone, Approvers: domain.Audience{Person: "lead"}},
	}
	if !reflect.DeepEqual(policies, want) {
		t.Errorf("policies\n%+v\nwant\n%+v", policies, want)
	}
	if len(notes) != 2 || !strings.Contains(notes["deploy"], "approval-gated tools") || !strings.Contains(notes["coder"], "coding agent") {
		t.Errorf("the start-up notes = %q", notes)
	}
}
