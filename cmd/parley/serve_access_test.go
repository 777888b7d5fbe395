package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

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
