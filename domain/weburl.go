package domain

import "net/url"

// WebURL parses s as an absolute http or https address, the only kind Parley links to,
// fetches or lets a person open; ok is false for anything else (javascript:, data:, file:,
// a relative path).
func WebURL(s string) (u *url.URL, ok bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return u, true
}
