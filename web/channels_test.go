package web_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/mailtest"
	"github.com/parley-chat/parley/internal/pushtest"
	"github.com/parley-chat/parley/notify"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// The network rule on the Settings form: an address inside the network is refused, saying
// why and keeping what was typed; a public one is taken; an ntfy topic keeps its token out
// of every page.
func TestChannels_TheNetworkRuleOnTheForm(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	for _, target := range []string{"http://127.0.0.1:9/hook", "http://localhost:8080/hook", "http://169.254.169.254/latest/meta-data/",
		"http://10.1.2.3/hooks/x", "http://192.168.1.20/x", "http://[::1]/x", "http://[fd12::1]/x", "http://2130706433/x"} {
		code, body, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"webhook"}, "target": {target}}, nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "That address is refused") || !strings.Contains(body, "--channel-networks") ||
			!strings.Contains(body, `value="`+strings.ReplaceAll(target, "&", "&amp;")+`"`) {
			t.Errorf("webhook %s: %d, want 422 saying why and keeping it typed:\n%s", target, code, between(body, `id="channels"`, "</form>"))
		}
	}
	if code, body, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"ntfy"}, "target": {"http://10.0.0.7/deploys"}}, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("an ntfy topic on 10.0.0.7: %d %s", code, between(body, `id="channels"`, "</form>"))
	}
	if code, _, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"push"}, "target": {"https://push.example/x"}}, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a push subscription through the form: %d, want 422", code)
	}
	if code, _, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"ntfy"}, "target": {"https://ntfy.example/deploys-ann"}, "token": {"tk_hidden_1"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("a public ntfy topic: %d", code)
	}
	if code, _, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"email"}, "target": {"ann@example.com"}}, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("an email address without an SMTP server: %d, want a refusal saying so", code)
	}
	_, page := ann.get("/settings")
	if !strings.Contains(page, "https://ntfy.example/deploys-ann") || strings.Contains(page, "tk_hidden_1") {
		t.Errorf("settings: the topic listed, its token never shown:\n%s", between(page, `id="channels"`, "</form>"))
	}

	// The operator allows the LAN's Mattermost.
	lan := newAccountsServerWith(t, web.NewServerOptions{Notify: web.NotifyOptions{Networks: mustNetworks(t, "192.168.5.0/24")}}, askerAndReader())
	ann = lan.signIn(t, "ann")
	if code, _, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"webhook"}, "target": {"http://192.168.5.20/hooks/x"}}, nil); code != http.StatusSeeOther {
		t.Errorf("a webhook in a network the operator allows: %d", code)
	}
	if code, _, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"webhook"}, "target": {"http://192.168.6.20/hooks/x"}}, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a webhook beside it: %d", code)
	}
}

// mailText is a plain mail's text, decoded.
func mailText(t *testing.T, m *mail.Message) string {
	t.Helper()
	b, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustNetworks(t *testing.T, s string) notify.Networks {
	n, err := notify.ParseNetworks(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// between is the part of s from the first from to the next to, for failure messages.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return s
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j+len(to)]
	}
	return s
}

// The push API: the key without sign-in, the same every time; a subscription from a program
// (token) or a page of Parley's own (session, same origin), never from another site; keys
// and endpoints checked; removed by its endpoint, only by its owner.
func TestPushAPI_Subscriptions(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	var key struct {
		PublicKey string `json:"public_key"`
	}
	anon := &apiClient{t: t, base: as.URL}
	anon.json("GET", "/api/v1/push/key", nil, 200, &key)
	raw, err := base64.RawURLEncoding.DecodeString(key.PublicKey)
	if err != nil || len(raw) != 65 || raw[0] != 4 {
		t.Fatalf("public key %q: %d bytes, %v; want an uncompressed P-256 point", key.PublicKey, len(raw), err)
	}
	var again struct {
		PublicKey string `json:"public_key"`
	}
	anon.json("GET", "/api/v1/push/key", nil, 200, &again)
	if again.PublicKey != key.PublicKey {
		t.Fatal("the key changed between two requests")
	}

	dh := base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...))
	auth := base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	sub := func(endpoint, p256dh string) map[string]any {
		return map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{"p256dh": p256dh, "auth": auth}}
	}
	ann, bob := as.token(t, "ann"), as.token(t, "bob")
	for _, tc := range []struct {
		body any
		want int
	}{
		{sub("https://push.example/ann-phone", dh), 201},
		{sub("https://push.example/ann-phone", dh), 201}, // the browser renewed it
		{sub("https://push.example/ann-laptop", "AAAA"), 422},
		{sub("http://push.example/plain", dh), 422},
		{sub("https://10.0.0.1/push", dh), 422},
		{sub("javascript:alert(1)", dh), 422},
		{"not a subscription", 422},
	} {
		if code, body, _ := ann.do("POST", "/api/v1/push/subscriptions", tc.body); code != tc.want {
			t.Errorf("POST %v = %d %s, want %d", tc.body, code, body, tc.want)
		}
	}
	if code, _, _ := anon.do("POST", "/api/v1/push/subscriptions", sub("https://push.example/x", dh)); code != http.StatusUnauthorized {
		t.Errorf("without a token or a session: %d, want 401", code)
	}

	// A page: its session, from Parley's own origin; another site's page is refused.
	page := as.signIn(t, "ann")
	form := `{"endpoint":"https://push.example/ann-tablet","keys":{"p256dh":"` + dh + `","auth":"` + auth + `"}}`
	post := func(p *person, headers map[string]string) int {
		req, _ := http.NewRequest("POST", as.URL+"/api/v1/push/subscriptions", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := p.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(page, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}); code != http.StatusForbidden {
		t.Errorf("another site's page: %d, want 403", code)
	}
	if code := post(page, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": as.URL}); code != http.StatusCreated {
		t.Errorf("Parley's own page: %d, want 201", code)
	}
	_, settings := page.get("/settings")
	devices := between(settings, `id="devices"`, "</section>")
	if n := strings.Count(devices, "<li"); n != 2 {
		t.Errorf("settings list %d devices, want ann's phone and tablet:\n%s", n, devices)
	}
	if regexp.MustCompile(`ann-laptop|plain`).MatchString(devices) {
		t.Errorf("a refused subscription is listed:\n%s", devices)
	}

	if code, _, _ := bob.do("DELETE", "/api/v1/push/subscriptions", map[string]string{"endpoint": "https://push.example/ann-phone"}); code != http.StatusNotFound {
		t.Errorf("bob removes ann's device: %d, want 404", code)
	}
	if code, _, _ := ann.do("DELETE", "/api/v1/push/subscriptions", map[string]string{"endpoint": "https://push.example/ann-phone"}); code != http.StatusNoContent {
		t.Errorf("ann removes her phone: %d, want 204", code)
	}
	if code, _, _ := ann.do("DELETE", "/api/v1/push/subscriptions", map[string]string{"endpoint": "https://push.example/ann-phone"}); code != http.StatusNotFound {
		t.Errorf("removed twice: %d, want 404", code)
	}
}

// An email address hears nothing until the link mailed to it is followed: the link's page
// asks to confirm (a GET changes nothing), the confirmation holds once, and the mail's
// Message-ID names Parley's public host.
func TestChannels_EmailConfirmedByItsLink(t *testing.T) {
	box := mailtest.Start(t)
	as := newAccountsServerWith(t, web.NewServerOptions{Notify: web.NotifyOptions{PublicURL: "https://parley.example",
		SMTP: &notify.SMTP{Host: "127.0.0.1", Port: box.Port, From: "Parley <parley@example.com>", TLS: "none"}}}, askerAndReader())
	ann := as.signIn(t, "ann")
	if code, body, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"email"}, "target": {"ann@example.com"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("add an address: %d %s", code, body)
	}
	_, settings := ann.get("/settings")
	if !strings.Contains(between(settings, `id="channels"`, "</form>"), "Waiting for confirmation") {
		t.Errorf("the address does not say it waits:\n%s", between(settings, `id="channels"`, "</form>"))
	}
	m := box.MailTo(t, "ann@example.com", 1)
	if id := m.Header.Get("Message-ID"); !strings.HasSuffix(id, "@parley.example>") {
		t.Errorf("Message-ID %q, want Parley's public host", id)
	}
	confirmLink := regexp.MustCompile(`https://parley\.example/channels/confirm\?token=([A-Za-z0-9_-]+)`)
	link := confirmLink.FindStringSubmatch(mailText(t, m))
	if link == nil {
		t.Fatalf("no link in the mail:\n%s", mailText(t, m))
	}
	token := link[1]

	// Sent again: the first link stops working.
	_, settings = ann.get("/settings")
	id := regexp.MustCompile(`name="id" value="(\d+)"`).FindStringSubmatch(between(settings, `id="channels"`, "</form>"))
	if id == nil {
		t.Fatal("no channel listed")
	}
	if code, _, _ := ann.do(http.MethodPost, "/settings/channels/confirm", url.Values{"id": {id[1]}}, nil); code != http.StatusSeeOther {
		t.Fatalf("send the link again: %d", code)
	}
	second := confirmLink.FindStringSubmatch(mailText(t, box.MailTo(t, "ann@example.com", 2)))
	if second == nil || second[1] == token {
		t.Fatalf("the second mail's link: %v", second)
	}
	fresh := second[1]

	stranger := as.browser(t) // whoever opens the mail: no sign-in needed
	if code, page := stranger.get("/channels/confirm?token=" + fresh); code != http.StatusOK || !strings.Contains(page, ">Confirm</button>") || !strings.Contains(page, "ann@example.com") {
		t.Fatalf("the link's page: %d %s", code, page)
	}
	_, settings = ann.get("/settings")
	if !strings.Contains(settings, "Waiting for confirmation") {
		t.Error("opening the link confirmed the address without Confirm")
	}
	if code, _, _ := stranger.do(http.MethodPost, "/channels/confirm", url.Values{"token": {token}}, nil); code != http.StatusNotFound {
		t.Errorf("the first link, replaced: %d, want 404", code)
	}
	if code, page, _ := stranger.do(http.MethodPost, "/channels/confirm", url.Values{"token": {fresh}}, nil); code != http.StatusOK || !strings.Contains(page, "ann@example.com is confirmed") {
		t.Fatalf("confirm: %d %s", code, page)
	}
	if code, _, _ := stranger.do(http.MethodPost, "/channels/confirm", url.Values{"token": {fresh}}, nil); code != http.StatusNotFound {
		t.Errorf("confirmed twice: %d, want 404", code)
	}
	_, settings = ann.get("/settings")
	if strings.Contains(settings, "Waiting for confirmation") {
		t.Error("still waiting after the confirmation")
	}

	// Nobody floods an address through Parley's mail server: a few links an hour.
	if code, body, _ := ann.do(http.MethodPost, "/settings/channels", url.Values{"kind": {"email"}, "target": {"someone@example.com"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("another address: %d %s", code, body)
	}
	_, settings = ann.get("/settings")
	other := regexp.MustCompile(`action="/settings/channels/confirm"><input type="hidden" name="id" value="(\d+)"`).FindStringSubmatch(settings)
	if other == nil {
		t.Fatalf("no Send the link again:\n%s", between(settings, `id="channels"`, "</form>"))
	}
	code, body := 0, ""
	for range 5 {
		if code, body, _ = ann.do(http.MethodPost, "/settings/channels/confirm", url.Values{"id": {other[1]}}, nil); code != http.StatusSeeOther {
			break
		}
	}
	if code != http.StatusTooManyRequests || !strings.Contains(body, "confirmation links sent this hour") {
		t.Errorf("links sent again and again: %d, want 429 on the form:\n%s", code, between(body, `id="channels"`, "</form>"))
	}
	if n := box.Count("someone@example.com"); n != 3 {
		t.Errorf("%d mails to the other address, want 3 (five links an hour: two went to ann)", n)
	}
}

// Which agents' questions notify the person, and their quiet hours, on Settings: saved and
// shown again; a half-given period refused with what was typed kept.
func TestSettings_NotifyPrefs(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	// A mute of an agent ann may not use now (its access changed) outlives her saving the form.
	if err := as.db.SetNotifyPrefs(t.Context(), mustUser(t, as, "ann"), domain.NotifyPrefs{Muted: []string{"deployer"}}, "ann"); err != nil {
		t.Fatal(err)
	}
	code, _, h := ann.do(http.MethodPost, "/settings/notifications", url.Values{"agent": {"asker"}, "quiet_from": {"22:00"}, "quiet_to": {"07:00"}, "quiet_zone": {"Europe/Lisbon"}}, nil)
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/settings") {
		t.Fatalf("save: %d %v", code, h)
	}
	_, page := ann.get(h.Get("Location"))
	form := between(page, `id="notify-prefs"`, "</form>")
	for _, want := range []string{`role="status">Saved.`, `value="asker" checked>`, `value="">`, `value="22:00"`, `value="07:00"`, `value="Europe/Lisbon"`} {
		if !strings.Contains(form, want) {
			t.Errorf("the form lacks %s:\n%s", want, form)
		}
	}
	code, body, _ := ann.do(http.MethodPost, "/settings/notifications", url.Values{"quiet_from": {"23:30"}, "quiet_zone": {"Europe/Lisbon"}}, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "Give both times") || !strings.Contains(body, `value="23:30"`) {
		t.Errorf("a period without its end: %d\n%s", code, between(body, `id="notify-prefs"`, "</form>"))
	}
	p, err := as.db.NotifyPrefs(t.Context(), mustUser(t, as, "ann"))
	if err != nil || len(p.Muted) != 2 || p.Muted[0] != "" || p.Muted[1] != "deployer" || p.Quiet.From != 22*60 || p.Quiet.To != 7*60 {
		t.Errorf("stored: %+v %v; want agents outside Parley and deployer muted, quiet 22:00 to 07:00 (the refused change not kept)", p, err)
	}
}

func mustUser(t *testing.T, as *accountsServer, name string) int64 {
	u, _, err := as.db.UserByName(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// Many people at once: each has a device and a webhook, and starts two conversations at the
// same time as the others; each question is pushed to its owner's device and posted to
// their webhook exactly once, and nobody hears of another's.
func TestNotifications_ManyPeopleAtOnce(t *testing.T) {
	push := pushtest.Start(t)
	var mu sync.Mutex
	hooks := map[string][]string{} // path: question URLs
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b notify.WebhookBody
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		hooks[r.URL.Path] = append(hooks[r.URL.Path], b.Parley.URL)
		mu.Unlock()
	}))
	defer hook.Close()
	as := newAccountsServerWith(t, web.NewServerOptions{Notify: web.NotifyOptions{Networks: mustNetworks(t, "127.0.0.1/32")}}, askerAndReader())
	hash, _ := cheapPasswords.Hash(testPassword)
	const people, each = 6, 2
	subs := map[string]pushtest.Subscription{}
	var wg sync.WaitGroup
	for i := range people {
		name := fmt.Sprintf("p%d", i)
		if _, err := as.db.CreateUser(t.Context(), name, hash, domain.RoleUser); err != nil {
			t.Fatal(err)
		}
		subs[name] = push.Subscribe(t, "ok", 0)
		client := as.token(t, name)
		client.json("POST", "/api/v1/push/subscriptions", subs[name], 201, nil)
		if _, err := as.db.AddChannel(t.Context(), domain.Channel{Kind: domain.ChannelWebhook, Target: hook.URL + "/" + name, UserID: mustUser(t, as, name)}, name); err != nil {
			t.Fatal(err)
		}
		for range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "asker", Text: "Plan the offsite"}, 201, nil)
			}()
		}
	}
	wg.Wait()
	pushes := push.WaitFor(t, "a push per question", func(ps []pushtest.Push) bool { return len(ps) >= people*each })
	for name, sub := range subs {
		var urls []string
		for _, p := range pushes {
			if p.Subscription == sub.Endpoint {
				var m notify.PushMessage
				json.Unmarshal(p.Payload, &m)
				urls = append(urls, m.URL)
			}
		}
		if len(urls) != each || urls[0] == urls[1] {
			t.Errorf("%s's device got %v, want each of their %d questions once", name, urls, each)
		}
		for _, u := range urls {
			id, _ := strconv.ParseInt(u[strings.LastIndex(u, "/")+1:], 10, 64)
			q, err := as.db.Question(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := as.db.Conversation(t.Context(), q.ConversationID)
			if c.UserID != mustUser(t, as, name) {
				t.Errorf("%s's device was told of question %d, of someone else's conversation", name, id)
			}
		}
	}
	webtest.WaitFor(t, "a webhook post per question", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, us := range hooks {
			n += len(us)
		}
		return n >= people*each
	})
	mu.Lock()
	defer mu.Unlock()
	for name := range subs {
		if got := hooks["/"+name]; len(got) != each || got[0] == got[1] {
			t.Errorf("%s's webhook got %v", name, got)
		}
	}
}
