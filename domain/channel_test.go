package domain

import (
	"testing"
	"time"
)

func TestQuietHours_Until(t *testing.T) {
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	at := func(loc *time.Location, y int, mo time.Month, d, h, m int) time.Time {
		return time.Date(y, mo, d, h, m, 0, 0, loc)
	}
	night := QuietHours{From: 22 * 60, To: 7 * 60, Zone: "Europe/Lisbon"}
	lunch := QuietHours{From: 12 * 60, To: 13*60 + 30, Zone: "Europe/Lisbon"}
	for _, tc := range []struct {
		name string
		q    QuietHours
		now  time.Time
		want time.Time
	}{
		{"none", QuietHours{}, at(lisbon, 2026, 11, 29, 23, 0), time.Time{}},
		{"before the night", night, at(lisbon, 2026, 11, 29, 21, 59), time.Time{}},
		{"the night's start", night, at(lisbon, 2026, 11, 29, 22, 0), at(lisbon, 2026, 11, 30, 7, 0)},
		{"after midnight", night, at(lisbon, 2026, 11, 30, 3, 15), at(lisbon, 2026, 11, 30, 7, 0)},
		{"the night's end", night, at(lisbon, 2026, 11, 30, 7, 0), time.Time{}},
		{"in another zone's words", night, at(time.UTC, 2026, 7, 1, 21, 30), at(lisbon, 2026, 7, 2, 7, 0)}, // 22:30 in Lisbon (summer)
		{"a month's last night", night, at(lisbon, 2026, 11, 30, 23, 0), at(lisbon, 2026, 12, 1, 7, 0)},
		{"lunch", lunch, at(lisbon, 2026, 11, 29, 12, 40), at(lisbon, 2026, 11, 29, 13, 30)},
		{"after lunch", lunch, at(lisbon, 2026, 11, 29, 13, 30), time.Time{}},
		{"the night the clocks go back", night, at(lisbon, 2026, 10, 25, 0, 30), at(lisbon, 2026, 10, 25, 7, 0)},
		{"an unknown zone reads as UTC", QuietHours{From: 60, To: 120, Zone: "Nowhere/Else"}, at(time.UTC, 2026, 1, 1, 1, 30), at(time.UTC, 2026, 1, 1, 2, 0)},
	} {
		got := tc.q.Until(tc.now)
		if !got.Equal(tc.want) {
			t.Errorf("%s: Until(%s) = %s, want %s", tc.name, tc.now, got, tc.want)
		}
		if !got.IsZero() && !got.After(tc.now) {
			t.Errorf("%s: the quiet hours end (%s) before now (%s)", tc.name, got, tc.now)
		}
	}
}

func TestCheckChannel_Kinds(t *testing.T) {
	for _, tc := range []struct {
		kind   ChannelKind
		target string
		ok     bool
	}{
		{ChannelNtfy, "https://ntfy.sh/deploys", true},
		{ChannelNtfy, "https://ntfy.example/deploys/", true},
		{ChannelNtfy, "https://ntfy.sh/", false},
		{ChannelNtfy, "https://ntfy.sh/a/b", false},
		{ChannelNtfy, "ntfy.sh/deploys", false},
		{ChannelPush, "https://fcm.googleapis.com/fcm/send/abc", true},
		{ChannelPush, "javascript:alert(1)", false},
		{ChannelWebhook, "https://hooks.example/x", true},
		{ChannelEmail, "ann@example.com", true},
		{ChannelEmail, "Ann <ann@example.com>", false},
		{"sms", "+351", false},
	} {
		_, err := CheckChannel(tc.kind, tc.target)
		if (err == nil) != tc.ok {
			t.Errorf("CheckChannel(%s, %q) = %v, want ok %v", tc.kind, tc.target, err, tc.ok)
		}
	}
}
