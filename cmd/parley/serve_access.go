package main

import (
	"context"
	"log/slog"
	"maps"
	"slices"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

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
