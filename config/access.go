package config

import (
	"errors"
	"fmt"

	"github.com/parley-chat/parley/domain"
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
