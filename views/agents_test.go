package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestInitials(t *testing.T) {
	for name, want := range map[string]string{"Ann Lee": "AL", "ann": "A", "ann.lee": "A", "  bob  ": "B", "Élodie Dupont Marie": "ÉD", "(x) y": "XY", "": "?", "—": "?"} {
		if got := Initials(name); got != want {
			t.Errorf("Initials(%q) = %q; want %q", name, got, want)
		}
	}
}

func TestAgentIcon(t *testing.T) {
	for _, c := range []struct {
		info domain.Info
		want string
	}{
		{domain.Info{Icon: "calendar", Kind: "builtin"}, "calendar"},
		{domain.Info{Icon: "no-such-icon", Kind: "acp"}, "terminal"},
		{domain.Info{Kind: "a2a"}, "globe"},
		{domain.Info{}, "bot"},
	} {
		if got := AgentIcon(c.info); got != c.want {
			t.Errorf("AgentIcon(%+v) = %q; want %q", c.info, got, c.want)
		}
	}
}

func TestSidebarGroups(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 30, 0, 0, time.UTC) // 01:30 in Paris, 19:30 the day before in New York
	at := func(s string) domain.Conversation {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return domain.Conversation{Title: s, UpdatedAt: ts}
	}
	cs := []domain.Conversation{at("2026-11-29T00:10:00Z"), at("2026-11-28T20:00:00Z"), at("2026-11-27T23:30:00Z"),
		at("2026-11-23T10:00:00Z"), at("2026-11-10T10:00:00Z"), at("2026-03-02T10:00:00Z"), at("2026-03-01T10:00:00Z")}
	shape := func(gs []SidebarGroup) string {
		var parts []string
		for _, g := range gs {
			parts = append(parts, fmt.Sprintf("%s:%d", g.Label, len(g.Conversations)))
		}
		return strings.Join(parts, " ")
	}
	for tz, want := range map[string]string{
		"":                 "Today:1 Yesterday:1 Previous 7 days:2 Previous 30 days:1 March 2026:2",
		"UTC":              "Today:1 Yesterday:1 Previous 7 days:2 Previous 30 days:1 March 2026:2",
		"Europe/Paris":     "Today:1 Yesterday:2 Previous 7 days:1 Previous 30 days:1 March 2026:2",
		"America/New_York": "Today:2 Yesterday:1 Previous 7 days:1 Previous 30 days:1 March 2026:2",
	} {
		var loc *time.Location // "": none given
		if tz != "" {
			var err error
			if loc, err = time.LoadLocation(tz); err != nil {
				t.Fatal(err)
			}
		}
		if got := shape(SidebarGroups(cs, now, loc)); got != want {
			t.Errorf("in %q: %s; want %s", tz, got, want)
		}
	}
}
