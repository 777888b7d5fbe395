package web_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// Sign-up refuses a name that looks like one taken ("аnn" with a Cyrillic а beside ann),
// next to the name field, and makes no account.
func TestSignup_LookAlikeNameRefused(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{})
	code, body, _ := as.browser(t).do(http.MethodPost, "/signup", url.Values{"name": {"аnn"}, "password": {testPassword}, "confirm": {testPassword}}, nil)
	if want := "looks too much like &#34;ann&#34;, which is taken"; code != http.StatusUnprocessableEntity || !strings.Contains(body, want) {
		t.Fatalf("sign-up as аnn = %d %.300s, want %q", code, body, want)
	}
	if _, _, err := as.db.UserByName(context.Background(), "аnn"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("the look-alike account was made: %v", err)
	}
}

// A sign-in proxy naming someone whose name looks like an account's ("саrol" with
// Cyrillic с and а, beside carol) gets no account made: the page says why.
func TestProxyAuth_LookAlikeNameRefused(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{Mode: web.AuthProxy, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, web.Limits{})
	code, body, _ := as.browser(t).do(http.MethodGet, "/", nil, map[string]string{"Remote-User": "саrol"})
	if code != http.StatusConflict || !strings.Contains(body, `looks too much like "carol"`) {
		t.Fatalf("саrol through the proxy = %d %.300s", code, body)
	}
	if _, _, err := as.db.UserByName(context.Background(), "саrol"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("the look-alike account was made: %v", err)
	}
}
