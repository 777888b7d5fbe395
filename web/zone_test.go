package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// The days of the sidebar are a person's: their zone setting, else their browser's (the
// cookie shell.js keeps), else UTC; a cookie that names no zone is ignored.
func TestDayZone(t *testing.T) {
	for _, c := range []struct {
		setting, cookie, want string
	}{
		{"Asia/Tokyo", "America%2FNew_York", "Asia/Tokyo"},
		{"", "America%2FNew_York", "America/New_York"},
		{"", "Europe/Lisbon", "Europe/Lisbon"},
		{"", "Local", "UTC"},
		{"", "..%2F..%2Fetc%2Fpasswd", "UTC"},
		{"", "Not%2FAZone", "UTC"},
		{"", "", "UTC"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.cookie != "" {
			r.AddCookie(&http.Cookie{Name: zoneCookie, Value: c.cookie})
		}
		if got := dayZone(r, domain.User{TimeZone: c.setting}).String(); got != c.want {
			t.Errorf("setting %q, cookie %q: zone %q; want %q", c.setting, c.cookie, got, c.want)
		}
	}
}
