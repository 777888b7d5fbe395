package views

import (
	"strings"
	"time"
	"unicode"

	"github.com/parley-chat/parley/domain"
)

// kindIcons are the icons of agents without one of their own, by back end.
var kindIcons = map[string]string{
	"builtin": "sparkles",
	"openai":  "bot",
	"a2a":     "globe",
	"agui":    "plug",
	"acp":     "terminal",
	"inbound": "plug",
}

// kindLabels tag an agent on the home page with its back end, as people say it.
var kindLabels = map[string]string{
	"builtin": "Built in",
	"openai":  "Model",
	"a2a":     "A2A agent",
	"agui":    "AG-UI agent",
	"acp":     "Coding agent",
}

// HasIcon reports whether name is one of the icons the pages can draw.
func HasIcon(name string) bool {
	_, ok := lucideIcons[name]
	return ok
}

// AgentIcon is the icon drawn for an agent: its own when it names one of the set, else its
// back end's.
func AgentIcon(a domain.Info) string {
	if HasIcon(a.Icon) {
		return a.Icon
	}
	if i, ok := kindIcons[a.Kind]; ok {
		return i
	}
	return "bot"
}

// KindLabel is the tag of an agent's back end; "" when it is not known.
func KindLabel(a domain.Info) string {
	if a.Builtin {
		return kindLabels["builtin"]
	}
	return kindLabels[a.Kind]
}

// Initials are the letters of a person's avatar: the first letters of their first two words
// ("Ann Lee" → "AL"), or the first letter of a one-word name ("ann.lee" → "A").
func Initials(name string) string {
	var out []rune
	for _, w := range strings.Fields(name) {
		for _, r := range w {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				out = append(out, unicode.ToUpper(r))
				break
			}
		}
		if len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return string(out)
}

// SidebarGroup is a run of the sidebar's conversations under a heading of when they were
// last active.
type SidebarGroup struct {
	Label         string
	Conversations []domain.Conversation
}

// SidebarGroups groups conversations (newest activity first) by the day of their last
// activity, as seen in the zone loc (nil: UTC) at now: Today, Yesterday, Previous 7 days,
// Previous 30 days, then by month ("March 2026").
func SidebarGroups(cs []domain.Conversation, now time.Time, loc *time.Location) []SidebarGroup {
	if loc == nil {
		loc = time.UTC
	}
	now = now.In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	label := func(t time.Time) string {
		t = t.In(loc)
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		switch {
		case !day.Before(today):
			return "Today"
		case !day.Before(today.AddDate(0, 0, -1)):
			return "Yesterday"
		case !day.Before(today.AddDate(0, 0, -7)):
			return "Previous 7 days"
		case !day.Before(today.AddDate(0, 0, -30)):
			return "Previous 30 days"
		}
		return t.Format("January 2006")
	}
	var out []SidebarGroup
	for _, c := range cs {
		l := label(c.UpdatedAt)
		if n := len(out); n > 0 && out[n-1].Label == l {
			out[n-1].Conversations = append(out[n-1].Conversations, c)
			continue
		}
		out = append(out, SidebarGroup{Label: l, Conversations: []domain.Conversation{c}})
	}
	return out
}
