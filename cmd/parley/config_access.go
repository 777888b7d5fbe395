package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

// agentPolicy reads who may use the agent and whom its approval gates go to. A coding agent
// (acp) or one with approval-gated tools is for staff until its access is set: they change
// things beyond the conversation. note says so, for the start-up log.
func agentPolicy(c AgentConfig) (p domain.Policy, note string, err error) {
	if c.Access != nil {
		if p.Access, err = domain.ParseAccess(c.Access); err != nil {
			return p, "", errors.New(domain.ErrorMessage(err))
		}
	} else if why := restricted(c); why != "" {
		p.Access = domain.StaffOnly
		note = fmt.Sprintf("%s, so it is for staff until its access is set: add access = [\"group:NAME\", ...] or [\"everyone\"] to its [[agents]] entry", why)
	} else {
		p.Access = domain.Everyone
	}
	if c.Approvers != "" {
		if p.Approvers, err = domain.ParseAudience(c.Approvers); err != nil {
			return p, "", fmt.Errorf("approvers: %s", domain.ErrorMessage(err))
		}
	}
	p.Approvals, p.Timeout = c.Approvals, c.ApprovalTimeout.Duration
	switch {
	case c.EscalateAfter.Duration != 0 && c.EscalateTo != "":
		p.Escalate = &domain.Escalation{After: c.EscalateAfter.Duration, To: c.EscalateTo}
	case c.EscalateAfter.Duration != 0 || c.EscalateTo != "":
		return p, "", errors.New("escalate_after and escalate_to go together: give both, or neither")
	}
	if err := p.Check(); err != nil {
		return p, "", err
	}
	if !p.Approvers.IsZero() && restricted(c) == "" {
		return p, "", errors.New("approvers: the agent has no approval gates (a coding agent's permission requests, or tool servers with approve or approve_tools)")
	}
	return p, note, nil
}

// restricted says why an agent whose access is not set is for staff alone, "" when it is
// everyone's.
func restricted(c AgentConfig) string {
	if c.Backend == "acp" {
		return "it is a coding agent"
	}
	for _, m := range c.MCP {
		if m.Approve || len(m.ApproveTools) > 0 {
			return "it has approval-gated tools"
		}
	}
	return ""
}

// logAccess says at start who may use each agent that is not everyone's and whom its gates
// go to, and warns of the groups and people named that are not there (yet).
func logAccess(ctx context.Context, log *slog.Logger, db *store.DB, policies map[string]domain.Policy) {
	names := slices.Sorted(maps.Keys(policies))
	for _, name := range names {
		p := policies[name]
		if !p.Access.Open() {
			log.Info("agent access", "agent", name, "who", p.Access.String())
		}
		if !p.Approvers.IsZero() {
			log.Info("agent approvers", "agent", name, "approvers", p.Approvers.Words(), "approvals", max(1, p.Approvals))
		}
		// Anyone with an account may be let in (an A2A client's service account too);
		// approvers are people, found as an approval finds them.
		warn := func(a domain.Audience, approver bool) {
			if a.Group != "" {
				if ok, err := db.GroupExists(ctx, a.Group); err == nil && !ok {
					log.Warn("agent names a group that does not exist yet", "agent", name, "group", a.Group)
				}
				return
			}
			var err error
			if approver {
				_, err = db.PersonNamed(ctx, a.Person)
			} else {
				_, _, err = db.UserByName(ctx, a.Person)
			}
			if domain.ErrorCode(err) == domain.ENOTFOUND {
				if approver {
					log.Warn("agent's approver has no account of a person yet (a service cannot approve)", "agent", name, "person", a.Person)
				} else {
					log.Warn("agent names a person who has no account yet", "agent", name, "person", a.Person)
				}
			}
		}
		for _, e := range p.Access {
			if a, err := domain.ParseAudience(e); err == nil {
				warn(a, false)
			}
		}
		if !p.Approvers.IsZero() {
			warn(p.Approvers, true)
		}
	}
}
