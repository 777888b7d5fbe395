package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

var tokenPattern = regexp.MustCompile(`parley_[A-Za-z0-9_-]{43}`)

// tokenRow is the settings page's row of the token named name, or "" when it has none.
func tokenRow(page, name string) string {
	m := regexp.MustCompile(`(?s)<tr><th scope="row" class="token-name">` + regexp.QuoteMeta(name) + `</th>(.*?)</tr>`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestSettings_AccessTokens(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{})
	ann, bob := as.signIn(t, "ann"), as.signIn(t, "bob")
	ctx := context.Background()

	_, page := ann.get("/settings")
	for _, want := range []string{`<h2 id="tokens-heading">Access tokens</h2>`, "Authorization: Bearer", `href="/api/v1/openapi.json"`,
		"You have no access tokens.", `<form method="post" action="/settings/tokens" novalidate>`, `<label for="token-name">`} {
		if !strings.Contains(page, want) {
			t.Errorf("settings page lacks %q", want)
		}
	}

	t.Run("RefusedNamesComeBackNextToTheField", func(t *testing.T) {
		long := strings.Repeat("x", 61)
		for _, tt := range []struct{ name, want, kept string }{
			{"", "Give the token a name", `value=""`},
			{"   ", "Give the token a name", `value=""`},
			{long, "at most 60 characters", `value="` + long + `"`},
			{"lap\x01top", "no control characters", `value="lap` + "\x01" + `top"`},
		} {
			code, body, h := ann.do(http.MethodPost, "/settings/tokens", url.Values{"name": {tt.name}}, nil)
			if code != http.StatusUnprocessableEntity || h.Get("Location") != "" {
				t.Errorf("name %q = %d, want 422 and the page", tt.name, code)
			}
			if !regexp.MustCompile(`<p class="field-error" id="token-name-error">[^<]*` + regexp.QuoteMeta(tt.want)).MatchString(body) {
				t.Errorf("name %q: no error %q next to the field", tt.name, tt.want)
			}
			if !strings.Contains(body, `name="name" value=`) || !strings.Contains(body, tt.kept) || !strings.Contains(body, `aria-invalid="true" autofocus`) {
				t.Errorf("name %q: the typed name is not kept (%s)", tt.name, tt.kept)
			}
			if tokenPattern.MatchString(body) {
				t.Errorf("name %q: a refused name made a token", tt.name)
			}
		}
	})

	// Ann makes one: the page shows it once, in a read-only box, with how to use it.
	code, body, h := ann.do(http.MethodPost, "/settings/tokens", url.Values{"name": {" laptop "}}, nil)
	if code != http.StatusCreated {
		t.Fatalf("make laptop = %d %.300s", code, body)
	}
	if h.Get("Location") != "" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("headers = %v: the token page is no redirect, and kept by no cache", h)
	}
	secret := tokenPattern.FindString(body)
	if secret == "" {
		t.Fatal("the page does not show the new token")
	}
	for _, want := range []string{`<input type="text" id="new-token" value="` + secret + `" readonly`, "Copy it now: Parley will not show it again.",
		"export PARLEY_TOKEN=", "parley chat", `Your new token “laptop”`} {
		if !strings.Contains(body, want) {
			t.Errorf("the new token's page lacks %q", want)
		}
	}
	if row := tokenRow(body, "laptop"); !strings.Contains(row, "<td>never</td>") {
		t.Errorf("the new token's row = %q; want it listed, never used", row)
	}
	u, tok, err := as.db.TokenUser(ctx, secret)
	if err != nil || u.Name != "ann" || tok.Name != "laptop" {
		t.Fatalf("the token shown acts as %+v %+v, %v; want ann's laptop", u, tok, err)
	}

	// Shown once: the page lists it from then on, never the token itself.
	_, page = ann.get("/settings")
	row := tokenRow(page, "laptop")
	if strings.Contains(page, secret) || strings.Contains(page, secret[len("parley_"):]) || tokenPattern.MatchString(page) {
		t.Error("the settings page shows the token again")
	}
	if !strings.Contains(row, `<time datetime="2026-11-22T09:00:00Z"`) || !strings.Contains(row, `aria-label="Revoke laptop"`) ||
		!strings.Contains(row, `<input type="hidden" name="name" value="laptop">`) {
		t.Errorf("laptop's row = %q; want when it was made, and Revoke", row)
	}
	if strings.Count(row, "<time ") != 2 || strings.Contains(row, "never") {
		t.Errorf("laptop's row = %q; want when it was last used (just now)", row)
	}

	t.Run("NameTaken", func(t *testing.T) {
		code, body, _ := ann.do(http.MethodPost, "/settings/tokens", url.Values{"name": {"laptop"}}, nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "You already have a token named &#34;laptop&#34;") || !strings.Contains(body, `value="laptop"`) {
			t.Errorf("second laptop = %d %.200s", code, body)
		}
		if tokenPattern.MatchString(body) {
			t.Error("a taken name made a token")
		}
	})

	// Bob has a laptop of his own; revoking it leaves ann's alone, and he cannot reach hers.
	code, body, _ = bob.do(http.MethodPost, "/settings/tokens", url.Values{"name": {"laptop"}}, nil)
	bobs := tokenPattern.FindString(body)
	if code != http.StatusCreated || bobs == "" || bobs == secret {
		t.Fatalf("bob's laptop = %d; names are per person", code)
	}
	if _, page := bob.get("/settings"); len(regexp.MustCompile(`class="token-name"`).FindAllString(page, -1)) != 1 || tokenPattern.MatchString(page) {
		t.Error("bob's settings list more than his own token, or show it")
	}
	code, body, h = bob.do(http.MethodPost, "/settings/tokens/revoke", url.Values{"name": {"laptop"}}, nil)
	if code != http.StatusSeeOther || h.Get("Location") != "/settings?saved=revoked&name=laptop#tokens" {
		t.Fatalf("bob revokes his laptop = %d %v %.200s", code, h, body)
	}
	if _, _, err := as.db.TokenUser(ctx, bobs); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Errorf("bob's revoked token: %v", err)
	}
	if u, _, err := as.db.TokenUser(ctx, secret); err != nil || u.Name != "ann" {
		t.Fatalf("ann's laptop after bob revoked his: %+v, %v", u, err)
	}
	code, body, _ = bob.do(http.MethodPost, "/settings/tokens/revoke", url.Values{"name": {"laptop"}}, nil)
	if code != http.StatusNotFound || !strings.Contains(body, "There is no token named &#34;laptop&#34;.") {
		t.Errorf("bob revokes laptop again = %d %.200s", code, body)
	}
	if _, _, err := as.db.TokenUser(ctx, secret); err != nil {
		t.Fatalf("bob's second try touched ann's laptop: %v", err)
	}

	// Ann revokes hers: the token is refused from then on, and the page says so.
	code, _, h = ann.do(http.MethodPost, "/settings/tokens/revoke", url.Values{"name": {"laptop"}}, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("ann revokes laptop = %d", code)
	}
	_, page = ann.get(h.Get("Location"))
	if !strings.Contains(page, "Token “laptop” revoked.") || tokenRow(page, "laptop") != "" || !strings.Contains(page, "You have no access tokens.") {
		t.Errorf("after revoking, the page = %.300s", page)
	}
	if _, _, err := as.db.TokenUser(ctx, secret); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Errorf("ann's revoked token: %v", err)
	}

	t.Run("RevokedNoticeRepeatsOnlyATokenName", func(t *testing.T) {
		for q, want := range map[string]string{
			"name=%3Cb%3Eboo%3C%2Fb%3E":       "Token “&lt;b&gt;boo&lt;/b&gt;” revoked.",
			"name=a%0Ab":                      "Token revoked.",
			"name=" + strings.Repeat("x", 61): "Token revoked.",
		} {
			if _, page := ann.get("/settings?saved=revoked&" + q); !strings.Contains(page, want) {
				t.Errorf("%s: page lacks %q", q, want)
			}
		}
	})
}

// Without sign-in, the one person makes tokens too.
func TestSettings_AccessTokensWithoutSignIn(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	code, body, _ := ts.post(t, "/settings/tokens", url.Values{"name": {"laptop"}})
	secret := tokenPattern.FindString(body)
	if code != http.StatusCreated || secret == "" {
		t.Fatalf("make = %d %.200s", code, body)
	}
	if u, _, err := ts.db.TokenUser(context.Background(), secret); err != nil || u.Name != web.NoneUser {
		t.Errorf("token acts as %+v, %v", u, err)
	}
}

// Revoked on the settings page, a token's open API streams end at once (the page runs the
// streams' check itself; the heartbeat is an hour away here).
func TestSettings_RevokeEndsTheTokensStreams(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	api := as.token(t, "ann") // "laptop"
	var started apiConv
	api.json("POST", "/api/v1/conversations", map[string]string{"agent": "asker", "text": "Plan the offsite"}, 201, &started)
	r, stop := api.events(started.Conversation.ID, "")
	defer stop()
	nextOf(t, r, "question.asked", "message.done", "run.state")
	if code, _, _ := ann.do(http.MethodPost, "/settings/tokens/revoke", url.Values{"name": {"laptop"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("revoke = %d", code)
	}
	for r.sc.Scan() {
	}
	if err := r.sc.Err(); err != nil {
		t.Fatalf("the stream did not end when its token was revoked: %v", err)
	}
	if code, _, _ := api.do("GET", "/api/v1/me", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/me with the revoked token = %d, want 401", code)
	}
}
