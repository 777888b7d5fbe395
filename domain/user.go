package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Role is what an account may do.
type Role string

// The roles. The first person's account is staff; Parley's own accounts (the A2A server's)
// are service accounts, which never sign in.
const (
	RoleUser    Role = "user"
	RoleStaff   Role = "staff"
	RoleService Role = "service"
)

// ParseRole reads a role a person typed (user or staff).
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case RoleUser, RoleStaff:
		return r, nil
	}
	return "", Errorf(EINVALID, "%q is not a role: use user or staff.", s)
}

// User is an account: a person who chats with agents, a staff member who reviews every
// conversation, or one of Parley's own.
type User struct {
	ID        int64
	Name      string
	Role      Role
	CreatedAt time.Time
	// DisplayName is what pages call the person (Name when empty); TimeZone the IANA zone
	// their times are shown in (the browser's when empty).
	DisplayName string
	TimeZone    string
}

// Shown is the name pages greet the person by.
func (u User) Shown() string {
	if u.DisplayName != "" {
		return u.DisplayName
	}
	return u.Name
}

// IsStaff reports whether u reviews every conversation.
func (u User) IsStaff() bool { return u.Role == RoleStaff }

// CanRead reports whether u may read conversation c (and its messages, questions, answers,
// documents and stream): its owner may, and staff may read them all.
func (u User) CanRead(c Conversation) bool {
	return u.ID != 0 && (c.UserID == u.ID || u.IsStaff())
}

// CanWrite reports whether u may write in conversation c: send, retry, answer. Only its
// owner may; staff answering on someone's behalf is a separate action (see Runner.Answer).
func (u User) CanWrite(c Conversation) bool { return u.ID != 0 && c.UserID == u.ID }

// Account name limits.
const maxNameRunes = 64

// A2AAccount is the service account that owns the conversations started over A2A; no
// person may take its name.
const A2AAccount = "a2a"

// CheckUserName says what is wrong with an account name, if anything: 1 to 64 characters,
// letters, digits and . _ - @ only (what proxies send as a user: a login or an e-mail).
func CheckUserName(name string) error {
	n := utf8.RuneCountInString(name)
	if n == 0 {
		return Errorf(EINVALID, "Choose a user name.")
	}
	if n > maxNameRunes {
		return Errorf(EINVALID, "A user name has at most %d characters.", maxNameRunes)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-@+", r) {
			return Errorf(EINVALID, "A user name has letters, digits and . _ - @ + only (not %q).", r)
		}
	}
	if strings.Trim(name, ".") == "" {
		// "." and ".." would name folders that are not the person's own (a workspace).
		return Errorf(EINVALID, "A user name is more than dots.")
	}
	return nil
}

// AuditEntry is one line of the audit log: who did what, when, in which conversation.
// Staff answering on someone's behalf, role changes and password resets are audited.
type AuditEntry struct {
	ID             int64
	At             time.Time
	Actor          string
	Action         string
	ConversationID int64
	Detail         string
}
