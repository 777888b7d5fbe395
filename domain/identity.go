package domain

import (
	"slices"
	"strings"
)

// The sources of groups and memberships that come from outside Parley: they are set again
// at each sign-in, joined and left, while staff's own groups ("") are staff's to change.
const (
	SourceOIDC  = "oidc"
	SourceProxy = "proxy"
)

// Identity is who an identity provider says signed in: its issuer and subject, which find the
// account at every sign-in, the name the account is made with the first time, and what the
// provider says of the person's groups and role.
type Identity struct {
	Issuer, Subject string
	Name            string
	// Groups are the groups the provider names, as Parley group names (ProviderGroups);
	// nil when it named none at all, which leaves the person's groups as they were.
	Groups []string
	// Staff, when set, is whether the person is staff (a member of the staff group): the
	// account's role follows it at each sign-in. Nil leaves the role to parley user set-role.
	Staff *bool
}

// SignIn is what a sign-in through a provider did: the account (made now or found), and the
// changes the provider's word brought to it.
type SignIn struct {
	User    User
	Created bool
	// Joined and Left are the groups the person entered and left; Role is the role set
	// when it changed.
	Joined, Left []string
	Role         Role
}

// ProviderGroups turns the group names a provider or a proxy sends into Parley group names:
// a leading "/" goes (Keycloak's full group path), inner "/" become "." ("/eng/ops" is
// eng.ops), spaces become "-". Names that are still not group names (see GroupName) are
// returned apart, for the log; duplicates go.
func ProviderGroups(raw []string) (names, refused []string) {
	for _, r := range raw {
		n := strings.TrimSpace(r)
		n = strings.TrimLeft(n, "/")
		n = strings.ReplaceAll(n, "/", ".")
		n = strings.Join(strings.Fields(n), "-")
		if n == "" {
			continue
		}
		name, err := GroupName(n)
		if err != nil {
			refused = append(refused, r)
			continue
		}
		if !slices.ContainsFunc(names, func(s string) bool { return strings.EqualFold(s, name) }) {
			names = append(names, name)
		}
	}
	return names, refused
}

// SplitList reads a comma-separated list, without empty items: groups given as one string
// (a sign-in proxy's header, a provider's claim that is not a list), a setting's list.
func SplitList(s string) []string {
	var out []string
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}
