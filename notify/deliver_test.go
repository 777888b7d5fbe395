package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/pushtest"
	"github.com/parley-chat/parley/notify"
)

// outbox is an outbox in memory: the deliveries due, and what became of each.
type outbox struct {
	mu      sync.Mutex
	all     map[int64]domain.Notification
	due     []domain.Notification
	tried   map[int64][]string // state: error
	waits   map[int64]time.Time
	dropped []int64
	changed chan struct{}
}

func newOutbox(ns ...domain.Notification) *outbox {
	o := &outbox{due: ns, all: map[int64]domain.Notification{}, tried: map[int64][]string{}, waits: map[int64]time.Time{}, changed: make(chan struct{}, 100)}
	for _, n := range ns {
		o.all[n.ID] = n
	}
	return o
}

func (o *outbox) DueNotifications(_ context.Context, now time.Time, limit int) ([]domain.Notification, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []domain.Notification
	for _, n := range o.due {
		if len(out) < limit {
			out = append(out, n)
		}
	}
	o.due = nil // each is handed out once; a retry comes back through NotificationTried
	return out, nil
}

func (o *outbox) NextNotification(context.Context) (time.Time, error) { return time.Time{}, nil }

func (o *outbox) NotificationTried(_ context.Context, id int64, state, errText string, next time.Time) error {
	o.mu.Lock()
	o.tried[id] = append(o.tried[id], state+": "+errText)
	if state == "pending" && !next.IsZero() {
		n := o.all[id]
		n.Attempts++
		o.all[id] = n
		o.due = append(o.due, n)
	}
	o.mu.Unlock()
	o.changed <- struct{}{}
	return nil
}

func (o *outbox) NotificationWaits(_ context.Context, id int64, until time.Time) error {
	o.mu.Lock()
	o.waits[id] = until
	o.mu.Unlock()
	o.changed <- struct{}{}
	return nil
}

func (o *outbox) DropChannel(_ context.Context, id int64, why string) error {
	o.mu.Lock()
	o.dropped = append(o.dropped, id)
	o.mu.Unlock()
	o.changed <- struct{}{}
	return nil
}

// settled waits until every delivery has an outcome: tried (sent, skipped or given up),
// put off, or its channel dropped.
func (o *outbox) settled(t *testing.T, want map[int64]string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		o.mu.Lock()
		got := map[int64]string{}
		for id, ts := range o.tried {
			last := ts[len(ts)-1]
			switch {
			case strings.HasSuffix(last, "(given up)"):
				got[id] = "failed"
			case !strings.HasPrefix(last, "pending"):
				got[id] = strings.SplitN(last, ":", 2)[0]
			}
		}
		for id := range o.waits {
			got[id] = "waits"
		}
		for _, ch := range o.dropped {
			for id, n := range o.all {
				if n.Channel.ID == ch {
					got[id] = "dropped"
				}
			}
		}
		o.mu.Unlock()
		done := len(got) == len(want)
		for id, w := range want {
			done = done && got[id] == w
		}
		if done {
			return
		}
		select {
		case <-o.changed:
		case <-deadline:
			t.Fatalf("outcomes %v, want %v (tries %v)", got, want, o.tried)
		}
	}
}

// keyStore keeps the server keys in memory.
type keyStore struct {
	mu   sync.Mutex
	keys map[string]string
}

func (k *keyStore) ServerKey(_ context.Context, name string, make func() (string, error)) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.keys[name]; ok {
		return v, nil
	}
	v, err := make()
	if err == nil {
		k.keys[name] = v
	}
	return v, err
}

// received is what a webhook or an ntfy receiver was sent.
type received struct {
	path   string
	header http.Header
	body   string
}

func receiver(t *testing.T) (*httptest.Server, func() []received) {
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.URL.Path, r.Header.Clone(), string(b)})
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

func question(id int64, pending bool) domain.QuestionRecord {
	q := domain.QuestionRecord{Question: domain.Question{ID: id, Asker: "Deployer", Message: "Run **deploy** 1432 to production?\nThe CI is green.",
		Fields: []domain.Field{{Name: "ok", Kind: "boolean"}}}, ConversationID: 7, AskedAt: time.Now()}
	if !pending {
		q.Resolution = &domain.Resolution{QuestionID: id, Outcome: domain.Answered, By: "ann"}
	}
	return q
}

// Word of a question goes to a webhook, an ntfy topic and a device's push subscription, each
// once, as each expects it: the push decrypted and its VAPID signature checked by an
// independent implementation (internal/pushtest: node's crypto and http_ece). A question
// resolved meanwhile goes nowhere; quiet hours put word off; a subscription its service says
// is gone is dropped; a busy service is tried again.
func TestNotifier_EveryKind(t *testing.T) {
	hooks, got := receiver(t)
	push := pushtest.Start(t)
	ok, gone, busy := push.Subscribe(t, "ok", 0), push.Subscribe(t, "gone", 0), push.Subscribe(t, "busy", 1)
	secret := func(s pushtest.Subscription) string {
		b, _ := json.Marshal(domain.PushKeys{P256dh: s.Keys.P256dh, Auth: s.Keys.Auth})
		return string(b)
	}
	ch := func(id int64, kind domain.ChannelKind, target, secret string) domain.Channel {
		return domain.Channel{ID: id, Kind: kind, Target: target, Secret: secret, UserID: 1}
	}
	now := time.Now().UTC()
	m := now.Hour()*60 + now.Minute()
	quiet := domain.QuietHours{From: (m + 1440 - 30) % 1440, To: (m + 30) % 1440, Zone: "UTC"}
	box := newOutbox(
		domain.Notification{ID: 1, Channel: ch(1, domain.ChannelWebhook, hooks.URL+"/hook", ""), Question: question(11, true), Owner: "ann", Reason: "asked"},
		domain.Notification{ID: 2, Channel: ch(2, domain.ChannelNtfy, hooks.URL+"/deploys", "tk_secret"), Question: question(11, true), Owner: "ann", Reason: "asked"},
		domain.Notification{ID: 3, Channel: ch(3, domain.ChannelPush, ok.Endpoint, secret(ok)), Question: question(11, true), Owner: "ann", Reason: "asked"},
		domain.Notification{ID: 4, Channel: ch(1, domain.ChannelWebhook, hooks.URL+"/hook", ""), Question: question(12, false), Owner: "ann", Reason: "asked"},
		domain.Notification{ID: 5, Channel: ch(3, domain.ChannelPush, ok.Endpoint, secret(ok)), Question: question(12, false), Owner: "ann", Reason: "asked"},
		domain.Notification{ID: 6, Channel: ch(2, domain.ChannelNtfy, hooks.URL+"/deploys", ""), Question: question(13, true), Owner: "ann", Reason: "asked", Quiet: quiet},
		domain.Notification{ID: 7, Channel: ch(4, domain.ChannelPush, gone.Endpoint, secret(gone)), Question: question(11, true), Owner: "ann", Reason: "asked"},
		domain.Notification{ID: 8, Channel: ch(5, domain.ChannelPush, busy.Endpoint, secret(busy)), Question: question(11, true), Owner: "ann", Reason: "asked"},
	)
	keys := notify.NewKeys(&keyStore{keys: map[string]string{}})
	n := notify.New(notify.Options{Outbox: box, BaseURL: "https://parley.example", Backoff: 10 * time.Millisecond,
		Networks: notify.Networks{netip.MustParsePrefix("127.0.0.1/32")}, Push: notify.Push{Keys: keys, Subject: "ops@parley.example"}})
	n.Start()
	defer n.Stop()
	box.settled(t, map[int64]string{1: "sent", 2: "sent", 3: "sent", 4: "skipped", 5: "skipped", 6: "waits", 7: "dropped", 8: "sent"})

	hits := got()
	if len(hits) != 2 {
		t.Fatalf("the receivers were sent %d requests, want the webhook's and ntfy's: %+v", len(hits), hits)
	}
	for _, h := range hits {
		switch h.path {
		case "/hook":
			var b notify.WebhookBody
			if err := json.Unmarshal([]byte(h.body), &b); err != nil || b.Parley.URL != "https://parley.example/questions/11" {
				t.Errorf("webhook body %s (%v)", h.body, err)
			}
		case "/deploys":
			if h.header.Get("Title") != "Deployer asks you" || h.header.Get("Click") != "https://parley.example/questions/11" ||
				h.header.Get("Tags") == "" || h.header.Get("Authorization") != "Bearer tk_secret" ||
				!strings.HasPrefix(h.body, "Run deploy 1432 to production?") || !strings.Contains(h.body, "https://parley.example/questions/11") {
				t.Errorf("ntfy got %v %q", h.header, h.body)
			}
		default:
			t.Errorf("a request to %s", h.path)
		}
	}
	until := box.waits[6]
	if until.Sub(now) < 29*time.Minute || until.Sub(now) > 31*time.Minute {
		t.Errorf("word in quiet hours waits until %s, want their end, about 30 minutes from %s", until, now)
	}

	v, err := keys.VAPID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pushes := push.Received(t)
	byEndpoint := map[string][]pushtest.Push{}
	for _, p := range pushes {
		if p.Error != "" {
			t.Errorf("the push service refused a push: %s", p.Error)
		}
		byEndpoint[p.Subscription] = append(byEndpoint[p.Subscription], p)
	}
	if len(byEndpoint[ok.Endpoint]) != 1 || len(byEndpoint[gone.Endpoint]) != 1 || len(byEndpoint[busy.Endpoint]) != 2 {
		t.Fatalf("pushes by subscription: %+v", byEndpoint)
	}
	p := byEndpoint[ok.Endpoint][0]
	var msg notify.PushMessage
	if err := json.Unmarshal(p.Payload, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.URL != "https://parley.example/questions/11" || msg.Title != "Deployer asks you" || !strings.HasPrefix(msg.Body, "Run deploy 1432") {
		t.Errorf("push payload %+v", msg)
	}
	if p.K != v.Public || p.Sub != "mailto:ops@parley.example" || p.TTL <= 0 || p.Bytes > 4096 || p.Urgency != "high" {
		t.Errorf("push: k %s (want %s), sub %s, ttl %d, %d bytes, urgency %q", p.K, v.Public, p.Sub, p.TTL, p.Bytes, p.Urgency)
	}
	if s := byEndpoint[busy.Endpoint]; s[0].Status != 503 || s[1].Status != 201 {
		t.Errorf("the busy service answered %d then %d", s[0].Status, s[1].Status)
	}
}

// A name that resolves to loopback passes the form's check, and is refused at delivery,
// on the address dialled: the receiver hears nothing.
func TestNotifier_RefusesWhatTheNameResolvesTo(t *testing.T) {
	hooks, got := receiver(t)
	byName := strings.Replace(hooks.URL, "127.0.0.1", "localhost", 1)
	box := newOutbox(
		domain.Notification{ID: 1, Channel: domain.Channel{ID: 1, Kind: domain.ChannelWebhook, Target: byName + "/hook", UserID: 1}, Question: question(1, true), Owner: "ann", Reason: "asked"},
		domain.Notification{ID: 2, Channel: domain.Channel{ID: 2, Kind: domain.ChannelNtfy, Target: byName + "/topic", UserID: 1}, Question: question(1, true), Owner: "ann", Reason: "asked"},
	)
	n := notify.New(notify.Options{Outbox: box, BaseURL: "https://parley.example", Backoff: 10 * time.Millisecond})
	n.Start()
	defer n.Stop()
	box.settled(t, map[int64]string{1: "failed", 2: "failed"})
	if hits := got(); len(hits) != 0 {
		t.Fatalf("the receiver on loopback was reached: %+v", hits)
	}
	for id, tries := range box.tried {
		if len(tries) != 1 || !strings.Contains(tries[0], "its name leads to a loopback address") || strings.Contains(tries[0], "127.0.0.1") {
			t.Errorf("delivery %d: %v; want one try, refused as loopback without naming the address, not retried", id, tries)
		}
	}
}
