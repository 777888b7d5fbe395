package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

func TestAgentPolicies(t *testing.T) {
	work := t.TempDir()
	cfgs, problems, err := loadConfig(writeConfig(t, `
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
	_, policies, notes, more := buildAgentsWith(cfgs, env(nil), map[string]bool{})
	problems = append(problems, more...)
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

// At start, Parley warns of the groups and people an agent's access and approvers name that
// are not there, finding them as the rules will: anyone with an account may be let in (the
// A2A clients' service account too), only a person's account approves.
func TestLogAccess_WarnsOfWhomItCannotFind(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateUser(ctx, "Ann", "", domain.RoleUser); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, domain.A2AAccount, "", domain.RoleService); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddToGroup(ctx, "ops", []string{"Ann"}, domain.RoleMember, "staff"); err != nil {
		t.Fatal(err)
	}
	access, err := domain.ParseAccess([]string{"group:OPS", "person:ann", "person:" + domain.A2AAccount, "group:ghosts", "person:zed"})
	if err != nil {
		t.Fatal(err)
	}
	policy := func(approvers string) domain.Policy {
		a, err := domain.ParseAudience(approvers)
		if err != nil {
			t.Fatal(err)
		}
		return domain.Policy{Access: access, Approvers: a}
	}
	var out bytes.Buffer
	logAccess(ctx, slog.New(slog.NewTextHandler(&out, nil)), db, map[string]domain.Policy{
		"deploy": policy("person:" + domain.A2AAccount), "release": policy("person:ANN"),
	})
	var warned []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "level=WARN") {
			warned = append(warned, l)
		}
	}
	has := func(agentName, what, who string) bool {
		return slices.ContainsFunc(warned, func(l string) bool {
			return strings.Contains(l, "agent="+agentName) && strings.Contains(l, what) && strings.Contains(l, who)
		})
	}
	for _, a := range []string{"deploy", "release"} {
		if !has(a, "group that does not exist", "group=ghosts") || !has(a, "person who has no account", "person=zed") {
			t.Errorf("%s: no warning of ghosts and zed: %q", a, warned)
		}
	}
	if !has("deploy", "approver has no account of a person", "person="+domain.A2AAccount) {
		t.Errorf("no warning that the service account cannot approve: %q", warned)
	}
	if len(warned) != 5 {
		t.Errorf("warnings = %q, want ghosts and zed for each agent and a2a as an approver", warned)
	}
}
