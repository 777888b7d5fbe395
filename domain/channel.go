package domain

import (
	"net/mail"
	"strings"
	"time"
)

// ChannelKind is how word of a question reaches someone outside the tab.
type ChannelKind string

// The kinds of channel.
const (
	// ChannelWebhook POSTs JSON to a URL: a Slack or Mattermost compatible "text", and the
	// question itself under "parley".
	ChannelWebhook ChannelKind = "webhook"
	// ChannelEmail sends an email (plain text and HTML) through the configured SMTP server.
	ChannelEmail ChannelKind = "email"
)

// Channel is one place word of questions goes: a person's or a group's.
type Channel struct {
	ID      int64
	Kind    ChannelKind
	Target  string // the URL, or the email address
	UserID  int64
	GroupID int64
	Created time.Time
	// LastOK and LastError are the last deliveries' outcomes (LastError empty once one
	// succeeded after it).
	LastOK, LastErrorAt time.Time
	LastError           string
}

// CheckChannel checks a channel's target for its kind: an http(s) URL without a secret in
// sight for a webhook, an address for an email.
func CheckChannel(kind ChannelKind, target string) (string, error) {
	target = strings.TrimSpace(target)
	switch kind {
	case ChannelWebhook:
		if _, ok := WebURL(target); !ok {
			return target, Errorf(EINVALID, "A webhook is an http:// or https:// URL.")
		}
	case ChannelEmail:
		a, err := mail.ParseAddress(target)
		if err != nil || a.Name != "" || a.Address != target {
			return target, Errorf(EINVALID, "Give one email address, such as ann@example.com.")
		}
	default:
		return target, Errorf(EINVALID, "A channel is a webhook or an email address.")
	}
	return target, nil
}

// Notification is one delivery due: word of a question, to a channel.
type Notification struct {
	ID       int64
	Channel  Channel
	Question QuestionRecord
	// Owner is the person whose agent asked; Reason "asked" or "escalated".
	Owner    string
	Reason   string
	Attempts int
}

// Escalation is who else gets a question still waiting after a while: a person or a group.
type Escalation struct {
	After time.Duration `json:"after"`
	// To is the person's or the group's name, as the asker gave it; one of UserID and
	// GroupID is set.
	To      string `json:"to"`
	UserID  int64  `json:"user_id,omitempty"`
	GroupID int64  `json:"group_id,omitempty"`
}
