package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"net/netip"
	"strings"
	"sync"
	"unicode/utf8"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/parley-chat/parley/domain"
)

// Push is what Web Push needs: Parley's VAPID key pair, and the subject push services may
// reach the operator at (a mailto: or https: address, RFC 8292).
type Push struct {
	Keys    *Keys
	Subject string
}

// Subject says whether s will do as the VAPID subject: an https: URL, or an email address
// (with or without mailto:) whose domain is a name with a dot, not localhost or an address.
func Subject(s string) bool {
	if u, ok := domain.WebURL(s); ok {
		return u.Scheme == "https" && strings.Contains(u.Hostname(), ".")
	}
	bare := strings.TrimPrefix(s, "mailto:")
	a, err := mail.ParseAddress(bare)
	if err != nil || a.Address != bare {
		return false
	}
	_, host, _ := strings.Cut(a.Address, "@")
	_, literal := netip.ParseAddr(strings.Trim(host, "[]"))
	return strings.Contains(host, ".") && literal != nil
}

// VAPID is an application server's key pair (RFC 8292), base64url: the public key an
// uncompressed P-256 point, as browsers take it for applicationServerKey.
type VAPID struct {
	Public  string `json:"public"`
	Private string `json:"private"`
}

// KeyStore keeps the keys Parley makes for itself (the store).
type KeyStore interface {
	ServerKey(ctx context.Context, name string, make func() (string, error)) (string, error)
}

// Keys hands out Parley's VAPID key pair: made at first use and kept in the database, so that
// the subscriptions browsers made with its public key keep working across restarts and
// instances.
type Keys struct {
	store KeyStore
	mu    sync.Mutex
	v     VAPID
}

// NewKeys returns the keys kept in store.
func NewKeys(store KeyStore) *Keys { return &Keys{store: store} }

// VAPID returns the key pair, made and stored the first time.
func (k *Keys) VAPID(ctx context.Context) (VAPID, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.v.Public != "" {
		return k.v, nil
	}
	raw, err := k.store.ServerKey(ctx, "vapid", func() (string, error) {
		priv, pub, err := webpush.GenerateVAPIDKeys()
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(VAPID{Public: pub, Private: priv})
		return string(b), err
	})
	if err != nil {
		return VAPID{}, err
	}
	var v VAPID
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v.Public == "" {
		return VAPID{}, fmt.Errorf("the stored VAPID keys are not readable")
	}
	k.v = v
	return v, nil
}

// PushMessage is what a device is sent (encrypted to it): the service worker shows title and
// body, and opens url when the notification is clicked.
type PushMessage struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	URL   string `json:"url"`
}

// pushTTL is how long a push service keeps a message for a device that is off: a day, past
// which the Inbox has told the person anyway.
const pushTTL = 24 * 3600

// push sends the question to a device's push subscription: encrypted to its keys
// (aes128gcm, RFC 8291), signed with Parley's VAPID key (RFC 8292). A service that answers
// 404 or 410 has dropped the subscription: so does Parley.
func (n *Notifier) push(ctx context.Context, d domain.Notification) error {
	if n.opts.Push.Keys == nil {
		return permanent{fmt.Errorf("Web Push is not set up")}
	}
	v, err := n.opts.Push.Keys.VAPID(ctx)
	if err != nil {
		return err
	}
	var keys domain.PushKeys
	if err := json.Unmarshal([]byte(d.Channel.Secret), &keys); err != nil || keys.P256dh == "" || keys.Auth == "" {
		return permanent{fmt.Errorf("the subscription has no keys")}
	}
	title, body := pushText(d)
	msg, err := json.Marshal(PushMessage{Title: title, Body: body, URL: n.Link(d.Question)})
	if err != nil {
		return permanent{err}
	}
	client := n.http
	if strings.HasPrefix(d.Channel.Target, "http:") {
		client = n.plain
	}
	resp, err := webpush.SendNotificationWithContext(ctx, msg, &webpush.Subscription{Endpoint: d.Channel.Target,
		Keys: webpush.Keys{P256dh: keys.P256dh, Auth: keys.Auth}}, &webpush.Options{
		HTTPClient: client, Subscriber: n.opts.Push.Subject, TTL: pushTTL, Urgency: webpush.UrgencyHigh,
		Topic:           fmt.Sprintf("q%d", d.Question.ID), // a newer word of the question replaces one not yet shown
		VAPIDPublicKey:  v.Public,
		VAPIDPrivateKey: v.Private,
	})
	if err != nil {
		return unreached(err, "the push service")
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
		resp.Body.Close()
		return gone{fmt.Errorf("the push service answered %s: the device is no longer subscribed", resp.Status)}
	}
	return answered(resp, "the push service")
}

// pushText is the question as a short notification: who asks, and the message's first line
// (for whom, when it is routed to others than its owner).
func pushText(d domain.Notification) (title, body string) {
	q := d.Question
	asker := firstLine(q.Asker)
	if asker == "" {
		asker = "An agent"
	}
	title = asker + " asks you"
	if q.Routed() {
		title = asker + " asks for your approval"
	}
	if d.Reason == "escalated" {
		title = "Still waiting: " + title
	}
	body = strings.NewReplacer("**", "", "__", "", "`", "").Replace(firstLine(q.Message))
	if body == "" {
		body = "A question waits for your answer."
	}
	if q.Routed() && d.Owner != "" {
		body += " (for " + d.Owner + ")"
	}
	return cut(title, 120), cut(body, 600)
}

// cut is s in at most n bytes, whole characters, with an ellipsis when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
