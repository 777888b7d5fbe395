package domain

import (
	"fmt"
	"net/mail"
	"slices"
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
	// ChannelEmail sends an email (plain text and HTML) through the configured SMTP server,
	// once the address is confirmed.
	ChannelEmail ChannelKind = "email"
	// ChannelNtfy POSTs the question to an ntfy topic URL (https://ntfy.sh/NAME or a server
	// of one's own), with an access token when one is given.
	ChannelNtfy ChannelKind = "ntfy"
	// ChannelPush is a browser's Web Push subscription (RFC 8030, 8291, 8292): a phone's or a
	// desktop's, made by "Notify this device" on Settings. Its target is the endpoint.
	ChannelPush ChannelKind = "push"
)

// Noun is the kind in a sentence: "That ntfy topic is there already."
func (k ChannelKind) Noun() string {
	switch k {
	case ChannelEmail:
		return "email address"
	case ChannelNtfy:
		return "ntfy topic"
	case ChannelPush:
		return "device"
	}
	return "webhook"
}

// Words is the kind as the pages name it.
func (k ChannelKind) Words() string {
	switch k {
	case ChannelEmail:
		return "Email"
	case ChannelNtfy:
		return "ntfy"
	case ChannelPush:
		return "Device"
	}
	return "Webhook"
}

// Channel is one place word of questions goes: a person's or a group's.
type Channel struct {
	ID     int64
	Kind   ChannelKind
	Target string // the URL, the email address, or the push endpoint
	// Secret is what delivering needs besides the target and is never shown: an ntfy access
	// token, or a push subscription's keys (PushKeys as JSON).
	Secret string
	// Label names a push subscription's device ("Chrome on Android").
	Label   string
	UserID  int64
	GroupID int64
	Created time.Time
	// Confirmed is when the email address was confirmed by the link mailed to it (other
	// kinds are confirmed when added); nothing is sent to an unconfirmed one.
	Confirmed time.Time
	// LastOK and LastError are the last deliveries' outcomes (LastError empty once one
	// succeeded after it).
	LastOK, LastErrorAt time.Time
	LastError           string
}

// Unconfirmed says whether the channel waits for its address to be confirmed.
func (ch Channel) Unconfirmed() bool { return ch.Confirmed.IsZero() }

// PushKeys are a push subscription's keys, as the browser's PushSubscription gives them
// (base64url): the receiver's P-256 public key and the authentication secret.
type PushKeys struct {
	P256dh string `json:"p256dh"`
	Auth   string `json:"auth"`
}

// CheckChannel checks a channel's target for its kind: an http(s) URL without a secret in
// sight for a webhook or an ntfy topic, an address for an email, an https:// (or http://)
// endpoint for a push subscription. Where the URL may lead is the operator's rule, checked
// besides (see notify.Networks).
func CheckChannel(kind ChannelKind, target string) (string, error) {
	target = strings.TrimSpace(target)
	switch kind {
	case ChannelWebhook:
		if _, ok := WebURL(target); !ok {
			return target, Errorf(EINVALID, "A webhook is an http:// or https:// URL.")
		}
	case ChannelNtfy:
		if u, ok := WebURL(target); !ok || strings.Trim(u.Path, "/") == "" || strings.Contains(strings.Trim(u.Path, "/"), "/") {
			return target, Errorf(EINVALID, "An ntfy topic is a URL such as https://ntfy.sh/my-topic: the server, then the topic.")
		}
	case ChannelPush:
		if _, ok := WebURL(target); !ok {
			return target, Errorf(EINVALID, "A push subscription's endpoint is an https:// URL.")
		}
	case ChannelEmail:
		a, err := mail.ParseAddress(target)
		if err != nil || a.Name != "" || a.Address != target {
			return target, Errorf(EINVALID, "Give one email address, such as ann@example.com.")
		}
	default:
		return target, Errorf(EINVALID, "A channel is a webhook, an email address or an ntfy topic.")
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
	// Quiet are the quiet hours of the person whose channel it is (none for a group's).
	Quiet QuietHours
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

// QuietHours are the hours of a person's day in which word of questions waits, in their
// time zone: from From to To (minutes after midnight; To before From runs past midnight).
// From equal to To is none.
type QuietHours struct {
	From, To int
	Zone     string
}

// On says whether there are quiet hours.
func (q QuietHours) On() bool { return q.From != q.To }

// Until is when the quiet hours that hold at now end; zero when now is not in them.
func (q QuietHours) Until(now time.Time) time.Time {
	if !q.On() {
		return time.Time{}
	}
	loc, err := time.LoadLocation(q.Zone)
	if err != nil {
		loc = time.UTC
	}
	t := now.In(loc)
	m := t.Hour()*60 + t.Minute()
	var in, today bool
	if q.From < q.To {
		in, today = m >= q.From && m < q.To, true
	} else {
		in, today = m >= q.From || m < q.To, m < q.To
	}
	if !in {
		return time.Time{}
	}
	day := t.Day()
	if !today {
		day++
	}
	end := time.Date(t.Year(), t.Month(), day, q.To/60, q.To%60, 0, 0, loc)
	if !end.After(now) { // a clock moved back: the hour comes again
		end = end.Add(time.Hour)
	}
	return end
}

// Clock is minutes after midnight as "HH:MM".
func Clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// ParseClock reads "HH:MM" (a time input's value) as minutes after midnight.
func ParseClock(s string) (int, bool) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// NotifyPrefs are what a person chose about word of their questions outside Parley: the
// agents whose questions do not notify them (Muted: their names, "" for agents outside
// Parley, over MCP), and quiet hours.
type NotifyPrefs struct {
	Muted []string
	Quiet QuietHours
}

// Mutes says whether the person muted the agent's questions.
func (p NotifyPrefs) Mutes(agent string) bool { return slices.Contains(p.Muted, agent) }
