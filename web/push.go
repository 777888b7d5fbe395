package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/mail"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
)

// pushSubject is the address push services may reach the operator at (the VAPID "sub"):
// the operator's, else Parley's https address, else the sender of its emails, else
// parley@ its host (which Apple refuses: NewServer warns).
func pushSubject(o NotifyOptions) string {
	if o.PushSubject != "" {
		return strings.TrimPrefix(o.PushSubject, "mailto:") // webpush-go writes the mailto: itself
	}
	if strings.HasPrefix(o.PublicURL, "https://") {
		return o.PublicURL
	}
	if o.SMTP != nil {
		if a, err := mail.ParseAddress(o.SMTP.From); err == nil {
			return a.Address
		}
	}
	host := "localhost"
	if u, err := url.Parse(o.PublicURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return "parley@" + host
}

// apiPushKey answers Parley's VAPID public key, which a browser's pushManager.subscribe takes
// as applicationServerKey. It is public: no sign-in.
func (s *Server) apiPushKey(c echo.Context) error {
	v, err := s.pushKeys.VAPID(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"public_key": v.Public})
}

// pushSubscription is the browser's PushSubscription as JSON (subscription.toJSON()).
type pushSubscription struct {
	Endpoint       string          `json:"endpoint"`
	ExpirationTime *int64          `json:"expirationTime"`
	Keys           domain.PushKeys `json:"keys"`
}

// check says what is wrong with a subscription a browser sent, if anything.
func (p pushSubscription) check() error {
	if _, err := domain.CheckChannel(domain.ChannelPush, p.Endpoint); err != nil {
		return err
	}
	dh, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(p.Keys.P256dh, "="))
	if err != nil || len(dh) != 65 || dh[0] != 4 {
		return domain.Errorf(domain.EINVALID, "keys.p256dh is the subscription's P-256 public key: 65 bytes, base64url.")
	}
	auth, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(p.Keys.Auth, "="))
	if err != nil || len(auth) != 16 {
		return domain.Errorf(domain.EINVALID, "keys.auth is the subscription's authentication secret: 16 bytes, base64url.")
	}
	return nil
}

// apiAddPush keeps a device's push subscription for the person: every question for them
// is pushed to it. The same endpoint again replaces the one kept (a browser renews its
// subscription; another person signs in there).
func (s *Server) apiAddPush(c echo.Context) error {
	var p pushSubscription
	if err := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 8<<10)).Decode(&p); err != nil {
		return domain.Errorf(domain.EINVALID, "Send the browser's PushSubscription as JSON: {endpoint, expirationTime, keys: {p256dh, auth}}.")
	}
	p.Endpoint = strings.TrimSpace(p.Endpoint)
	if err := p.check(); err != nil {
		return err
	}
	if err := s.networks.CheckURL(p.Endpoint, true); err != nil {
		return domain.Errorf(domain.EINVALID, "That push endpoint is refused: %s.", err.Error())
	}
	// Kept as the browser's keys without padding, so that the same keys compare equal.
	secret, _ := json.Marshal(domain.PushKeys{P256dh: strings.TrimRight(p.Keys.P256dh, "="), Auth: strings.TrimRight(p.Keys.Auth, "=")})
	u := currentUser(c)
	ch, err := s.groups.AddChannel(c.Request().Context(), domain.Channel{Kind: domain.ChannelPush, Target: p.Endpoint, Secret: string(secret),
		Label: deviceLabel(c.Request().UserAgent()), UserID: u.ID}, u.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"id": ch.ID, "endpoint": ch.Target, "label": ch.Label})
}

// apiRemovePush forgets a device's subscription: {"endpoint": …}.
func (s *Server) apiRemovePush(c echo.Context) error {
	var p struct {
		Endpoint string `json:"endpoint"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 8<<10)).Decode(&p); err != nil || p.Endpoint == "" {
		return domain.Errorf(domain.EINVALID, `Send {"endpoint": …}, the subscription's endpoint.`)
	}
	u := currentUser(c)
	if err := s.groups.RemovePush(c.Request().Context(), u.ID, strings.TrimSpace(p.Endpoint), u.Name); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// requireTokenOrPage lets through a request with a personal access token (a program), or
// one of a signed-in page of Parley's own (its session, and the cross-origin protection
// every page's POST has): the push subscriptions are made by the page itself.
func (s *Server) requireTokenOrPage(next echo.HandlerFunc) echo.HandlerFunc {
	withToken := s.requireToken(next)
	return func(c echo.Context) error {
		r := c.Request()
		if _, ok := bearer(r); ok {
			return withToken(c)
		}
		if err := s.pageOrigin.Check(r); err != nil || s.otherScheme(r) {
			return domain.Errorf(domain.EFORBIDDEN, "Refused: this request came from another site. Use Parley from its own pages.")
		}
		u, err := s.identify(r)
		if err != nil {
			return err
		}
		c.Set(userKey, u)
		return next(c)
	}
}

// handleRemoveDevice removes one of the person's devices from Settings.
func (s *Server) handleRemoveDevice(c echo.Context) error {
	return s.settingsChannel(c, s.removeChannel(c, currentUser(c).ID, 0), "devices")
}

// deviceLabel names a device by its browser's User-Agent: "Chrome on Android".
func deviceLabel(ua string) string {
	browser := "A browser"
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"SamsungBrowser/", "Samsung Internet"}, {"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"},
		{"CriOS/", "Chrome"}, {"Chrome/", "Chrome"}, {"Chromium/", "Chromium"}, {"Safari/", "Safari"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	for _, o := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"Mac OS X", "Mac"}, {"Windows", "Windows"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			return browser + " on " + o.name
		}
	}
	return browser
}
