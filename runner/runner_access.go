package runner

import (
	"cmp"
	"context"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// Policy is what the operator says of the named agent (see Policy): who may use it, whom
// its approval gates go to. An agent without one is everyone's.
func (r *Runner) Policy(name string) domain.Policy {
	p := r.policies[name]
	if p.Access == nil {
		p.Access = domain.Everyone
	}
	return p
}

// SetNotify sets what wakes the delivery of word of questions (the notifier): the runner
// calls it when an agent asks a question (of the conversation's owner, or routed).
func (r *Runner) SetNotify(fn func()) { r.notify = fn }

// Person reads an account with the groups it is a member of, as access rules need it.
func (r *Runner) Person(ctx context.Context, userID int64) (domain.Person, error) {
	u, err := r.ledger.User(ctx, userID)
	if err != nil {
		return domain.Person{}, err
	}
	return r.PersonOf(ctx, u)
}

// PersonOf is the person of an account already read: its groups are read.
func (r *Runner) PersonOf(ctx context.Context, u domain.User) (domain.Person, error) {
	gs, err := r.ledger.MemberGroups(ctx, u.ID)
	if err != nil {
		return domain.Person{}, err
	}
	return domain.Person{User: u, Groups: gs}, nil
}

// MayUse reports whether the person may use the named agent: it is served here, and its
// access list lets them in.
func (r *Runner) MayUse(p domain.Person, name string) bool {
	if _, ok := r.agents[name]; !ok {
		return false
	}
	return r.Policy(name).Access.Allows(p)
}

// AgentsFor lists the agents the person may use, by title.
func (r *Runner) AgentsFor(p domain.Person) []domain.Info {
	var out []domain.Info
	for _, a := range r.Agents() {
		if r.MayUse(p, a.Name) {
			out = append(out, a)
		}
	}
	return out
}

// NoSuchAgent is the error of an agent that is not there for the person: not served here,
// or not theirs to use, told alike.
func NoSuchAgent(name string) error {
	return domain.Errorf(domain.ENOTFOUND, "There is no agent %q.", name)
}

// mayStart checks that the account may start a conversation with the named agent.
func (r *Runner) mayStart(ctx context.Context, userID int64, name string) error {
	if _, ok := r.agents[name]; !ok {
		return NoSuchAgent(name)
	}
	if r.Policy(name).Access.Open() {
		return nil
	}
	p, err := r.Person(ctx, userID)
	if err != nil {
		return fmt.Errorf("who starts: %w", err)
	}
	if !r.MayUse(p, name) {
		return NoSuchAgent(name)
	}
	return nil
}

// LostAgent is the error of a conversation whose person may no longer use its agent: it
// stays readable, its questions answerable, and nothing new starts in it.
func LostAgent(title string) error {
	return domain.Errorf(domain.EFORBIDDEN, "You may no longer use %s, so this conversation is read-only: you can still read it and answer its questions.", title)
}

// mayContinue checks that the conversation's owner may still use its agent, before a
// message starts new work in it (LostAgent when not): only its owner writes in it.
func (r *Runner) mayContinue(ctx context.Context, conversationID int64) error {
	c, err := r.ledger.Conversation(ctx, conversationID)
	if err != nil {
		return err
	}
	return r.mayContinueIn(ctx, c)
}

// mayContinueIn is mayContinue of a conversation already read.
func (r *Runner) mayContinueIn(ctx context.Context, c domain.Conversation) error {
	if c.Inbound() || r.Policy(c.Agent).Access.Open() {
		return nil
	}
	p, err := r.Person(ctx, c.UserID)
	if err != nil {
		return fmt.Errorf("who writes: %w", err)
	}
	if !r.MayUse(p, c.Agent) {
		info, _ := r.Agent(c.Agent)
		return LostAgent(cmp.Or(info.Title, c.Agent))
	}
	return nil
}
