package domain

import "strings"

// Group is people asked together: a question to a group is in every member's Inbox, and the
// first answer resolves it for all (exactly once, as every question). Members may address
// their group; staff may let other people address it too (RoleAsker), without it being in
// their Inbox.
type Group struct {
	ID      int64
	Name    string
	Members []GroupMember
	// Source says where the group comes from: SourceOIDC or SourceProxy for one an identity
	// provider named, "" for staff's own.
	Source string
}

// GroupMember is one person of a group and what they are to it.
type GroupMember struct {
	UserID int64
	Name   string
	Role   GroupRole
	// Source is where the membership comes from: the provider's (set at each sign-in) or
	// staff's ("").
	Source string
}

// GroupRole is what a person is to a group.
type GroupRole string

// The roles of a group's people.
const (
	// GroupMember people get the group's questions and may address it.
	RoleMember GroupRole = "member"
	// RoleAsker people may address the group (an agent of theirs asks it), nothing more.
	RoleAsker GroupRole = "asker"
)

// role is what the person is to the group, "" when nothing.
func (g Group) role(userID int64) GroupRole {
	for _, m := range g.Members {
		if m.UserID == userID {
			return m.Role
		}
	}
	return ""
}

// MembersBesides counts the members but the person: who may answer what they ask the
// group, since whoever asks does not answer their own question.
func (g Group) MembersBesides(userID int64) int {
	n := 0
	for _, m := range g.Members {
		if m.Role == RoleMember && m.UserID != userID {
			n++
		}
	}
	return n
}

// IsMember reports whether the person gets the group's questions.
func (g Group) IsMember(userID int64) bool { return g.role(userID) == RoleMember }

// MayAsk reports whether the person may address the group.
func (g Group) MayAsk(userID int64) bool { return g.role(userID) != "" }

// People are the names of the people of a role, in the group's order (by name).
func (g Group) People(r GroupRole) []string {
	var out []string
	for _, m := range g.Members {
		if m.Role == r {
			out = append(out, m.Name)
		}
	}
	return out
}

// GroupName checks a group's name: letters, digits, "-", "_" and ".", 1 to 64 of them, so
// that it reads the same in a tool call, a URL and a command line.
func GroupName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 64 {
		return name, Errorf(EINVALID, "A group's name has 1 to 64 characters.")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return name, Errorf(EINVALID, "A group's name has letters, digits, -, _ and . only: %q has %q.", name, r)
		}
	}
	return name, nil
}
