package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Person is a signed-in person as access rules read them: their account, and the groups
// they are a member of (whose questions they answer).
type Person struct {
	User
	Groups []string
}

// InGroup reports whether the person is a member of the named group (any letter case).
func (p Person) InGroup(name string) bool {
	return slices.ContainsFunc(p.Groups, func(g string) bool { return strings.EqualFold(g, name) })
}

// The words of an access list ([[agents]] access).
const (
	AccessEveryone = "everyone"
	AccessStaff    = "staff"
	accessGroup    = "group:"
	accessPerson   = "person:"
)

// Access is who may use an agent: "everyone", "staff", "group:NAME" and "person:NAME", any
// of them. Staff may use every agent whatever its list says. Conversations started over A2A
// belong to Parley's a2a account: "everyone" takes them in, and so does "person:a2a".
type Access []string

// Everyone is the access of an agent that says nothing: anyone who signs in.
var Everyone = Access{AccessEveryone}

// StaffOnly is the access of an agent whose list is not set but which can change things
// beyond the conversation (a coding agent, approval-gated tools): staff until said otherwise.
var StaffOnly = Access{AccessStaff}

// ParseAccess reads an access list, each entry checked; it refuses an empty list (nobody
// but staff could use the agent: say "staff").
func ParseAccess(list []string) (Access, error) {
	if len(list) == 0 {
		return nil, Errorf(EINVALID, `access is empty: give "everyone", "staff", "group:NAME" or "person:NAME"`)
	}
	out := make(Access, 0, len(list))
	for _, raw := range list {
		e := strings.TrimSpace(raw)
		kind, name, _ := strings.Cut(e, ":")
		switch strings.ToLower(kind) {
		case AccessEveryone, AccessStaff:
			if strings.Contains(e, ":") {
				return nil, Errorf(EINVALID, "access %q: %s takes no name", raw, kind)
			}
			e = strings.ToLower(e)
		case "group", "person":
			a, err := audienceOf(kind, name)
			if err != nil {
				return nil, Errorf(EINVALID, "access %q: %s", raw, ErrorMessage(err))
			}
			e = a.String()
		default:
			return nil, Errorf(EINVALID, `access %q: use "everyone", "staff", "group:NAME" or "person:NAME"`, raw)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Allows reports whether the person may use the agent: staff always; anyone when the list
// says everyone; else a member of a group it names, or a person it names.
func (a Access) Allows(p Person) bool {
	if p.ID == 0 {
		return false
	}
	if p.IsStaff() {
		return true
	}
	for _, e := range a {
		switch {
		case e == AccessEveryone:
			return true
		case strings.HasPrefix(e, accessGroup) && p.InGroup(e[len(accessGroup):]):
			return true
		case strings.HasPrefix(e, accessPerson) && strings.EqualFold(e[len(accessPerson):], p.Name):
			return true
		}
	}
	return false
}

// Open reports whether the list lets everyone in.
func (a Access) Open() bool { return len(a) == 0 || slices.Contains(a, AccessEveryone) }

// String says who the list lets in, for the log and the pages: "staff and the group ops".
func (a Access) String() string {
	if a.Open() {
		return "everyone"
	}
	var parts []string
	for _, e := range a {
		switch {
		case e == AccessStaff:
			parts = append(parts, "staff")
		case strings.HasPrefix(e, accessGroup):
			parts = append(parts, "the group "+e[len(accessGroup):])
		case strings.HasPrefix(e, accessPerson):
			parts = append(parts, e[len(accessPerson):])
		}
	}
	if !slices.Contains(a, AccessStaff) {
		parts = append(parts, "staff")
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Audience is whom a question goes to instead of its conversation's owner: a group's members
// or one person. The zero Audience is the owner.
type Audience struct {
	Group, Person string
}

// ParseAudience reads "group:NAME" or "person:NAME".
func ParseAudience(s string) (Audience, error) {
	kind, name, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Audience{}, Errorf(EINVALID, `%q: give "group:NAME" or "person:NAME"`, s)
	}
	switch strings.ToLower(kind) {
	case "group", "person":
		a, err := audienceOf(kind, name)
		if err != nil {
			return Audience{}, Errorf(EINVALID, "%q: %s", s, ErrorMessage(err))
		}
		return a, nil
	}
	return Audience{}, Errorf(EINVALID, `%q: give "group:NAME" or "person:NAME"`, s)
}

// audienceOf is the group or the person named (kind "group" or "person", any case), the
// name checked.
func audienceOf(kind, name string) (Audience, error) {
	if strings.EqualFold(kind, "group") {
		n, err := GroupName(name)
		return Audience{Group: n}, err
	}
	n := strings.TrimSpace(name)
	return Audience{Person: n}, CheckUserName(n)
}

// IsZero reports whether the audience is the conversation's owner.
func (a Audience) IsZero() bool { return a.Group == "" && a.Person == "" }

// String is the audience as written: "group:ops", "person:ann", "" for the owner.
func (a Audience) String() string {
	switch {
	case a.Group != "":
		return accessGroup + a.Group
	case a.Person != "":
		return accessPerson + a.Person
	}
	return ""
}

// Words names the audience in a sentence: "the group ops", "ann".
func (a Audience) Words() string {
	if a.Group != "" {
		return "the group " + a.Group
	}
	return a.Person
}

// Policy is what an operator says of an agent beyond its back end: who may use it, and
// whom its approval gates go to.
type Policy struct {
	// Access is who may use the agent (nil: everyone).
	Access Access
	// Approvers, when set, get every approval gate of the agent (a tool call to approve, a
	// coding agent's permission request) instead of the conversation's owner: Approvals of
	// them must approve (default 1), any of them may reject, and the owner never approves.
	Approvers Audience
	Approvals int
	// Timeout expires a routed approval nobody acted on (0: it waits), and Escalate puts it
	// to others too once it waited that long (To is "group:NAME" or "person:NAME").
	Timeout  time.Duration
	Escalate *Escalation
}

// Check says what is wrong with the policy's approval settings, naming the setting.
func (p Policy) Check() error {
	switch {
	case p.Approvals < 0:
		return fmt.Errorf("approvals must be 1 or more")
	case p.Approvals > 1 && p.Approvers.Group == "":
		return fmt.Errorf("approvals = %d needs approvers = \"group:NAME\": that many different people must approve", p.Approvals)
	case p.Approvers.IsZero() && (p.Approvals > 0 || p.Timeout != 0 || p.Escalate != nil):
		return fmt.Errorf("approvals, approval_timeout and escalate_after/escalate_to go with approvers")
	case p.Timeout < 0:
		return fmt.Errorf("approval_timeout must not be negative")
	case p.Escalate != nil && p.Escalate.After < time.Second:
		return fmt.Errorf("escalate_after must be at least 1s")
	}
	if p.Escalate != nil {
		if _, err := ParseAudience(p.Escalate.To); err != nil {
			return fmt.Errorf("escalate_to %s", ErrorMessage(err))
		}
	}
	return nil
}

// Route addresses an approval gate q of an agent with policy p to its approvers, with their
// number, deadline and escalation; any other question (or an agent without approvers) is
// returned as it is. now dates the deadline.
func (p Policy) Route(q Question, now time.Time) Question {
	if !q.Gate || p.Approvers.IsZero() {
		return q
	}
	q.To, q.ToPerson = p.Approvers.Group, p.Approvers.Person
	// Its approvers approve or reject; stopping the person's work is not theirs to do.
	q.AllowCancel = false
	if p.Approvals > 1 {
		q.Approvals = p.Approvals
	}
	if p.Timeout > 0 && (q.Deadline.IsZero() || now.Add(p.Timeout).Before(q.Deadline)) {
		q.Deadline = now.Add(p.Timeout).Truncate(time.Second)
	}
	if p.Escalate != nil {
		e := *p.Escalate
		q.Escalate = &e
	}
	return q
}
