package pushtest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/parley-chat/parley/internal/pushtest"
)

// vapid is a VAPID key pair as webpush-go makes and takes them.
type vapid struct{ private, public string }

func newVAPID(t *testing.T) vapid {
	t.Helper()
	private, public, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	return vapid{private, public}
}

// toWebpush turns the browser's JSON into webpush-go's subscription, as Parley will.
func toWebpush(t *testing.T, sub pushtest.Subscription) *webpush.Subscription {
	t.Helper()
	b, err := json.Marshal(sub)
	if err != nil {
		t.Fatal(err)
	}
	var s webpush.Subscription
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// send pushes payload with webpush-go and returns the status the service answered.
func send(t *testing.T, sub *webpush.Subscription, payload string, o webpush.Options) int {
	t.Helper()
	if o.Subscriber == "" {
		o.Subscriber = "ops@example.com"
	}
	if o.TTL == 0 {
		o.TTL = 60
	}
	resp, err := webpush.SendNotificationWithContext(context.Background(), []byte(payload), sub, &o)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

const message = `{"title":"T","body":"B","url":"http://x/questions/1"}`

// samePayload says whether the JSON got holds the same value as want.
func samePayload(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}

func TestPush(t *testing.T) {
	svc := pushtest.Start(t)
	keys := newVAPID(t)

	t.Run("OK", func(t *testing.T) {
		sub := svc.Subscribe(t, "ok", 0)
		if !strings.HasPrefix(sub.Endpoint, svc.Origin+"/push/") || sub.ExpirationTime != nil {
			t.Fatalf("subscription %+v", sub)
		}
		before := time.Now().Unix()
		status := send(t, toWebpush(t, sub), message, webpush.Options{
			VAPIDPublicKey:  keys.public,
			VAPIDPrivateKey: keys.private,
			Urgency:         webpush.UrgencyHigh,
		})
		if status != http.StatusCreated {
			t.Fatalf("status %d, want 201: %+v", status, svc.Received(t))
		}
		p := only(t, svc.Received(t), sub.Endpoint)
		if p.Error != "" {
			t.Fatalf("error %q", p.Error)
		}
		if !samePayload(t, p.Payload, message) {
			t.Errorf("payload %s, want %s", p.Payload, message)
		}
		if p.K != keys.public {
			t.Errorf("k %q, want %q", p.K, keys.public)
		}
		if p.Sub != "mailto:ops@example.com" {
			t.Errorf("sub %q, want mailto:ops@example.com", p.Sub)
		}
		if p.Aud != svc.Origin {
			t.Errorf("aud %q, want %q", p.Aud, svc.Origin)
		}
		if p.Exp < before || p.Exp > before+24*60*60 {
			t.Errorf("exp %d, want within a day of %d", p.Exp, before)
		}
		if p.TTL != 60 || p.Urgency != "high" || p.Status != http.StatusCreated {
			t.Errorf("ttl %d, urgency %q, status %d; want 60, high, 201", p.TTL, p.Urgency, p.Status)
		}
	})

	t.Run("Gone", func(t *testing.T) {
		sub := toWebpush(t, svc.Subscribe(t, "gone", 0))
		for range 2 {
			if got := send(t, sub, message, webpush.Options{VAPIDPublicKey: keys.public, VAPIDPrivateKey: keys.private}); got != http.StatusGone {
				t.Fatalf("status %d, want 410", got)
			}
		}
		if p := svc.Received(t); p[len(p)-1].Error != "" || !samePayload(t, p[len(p)-1].Payload, message) {
			t.Errorf("a push to a gone subscription was not checked as any other: %+v", p[len(p)-1])
		}
	})

	t.Run("Busy", func(t *testing.T) {
		sub := toWebpush(t, svc.Subscribe(t, "busy", 1))
		o := webpush.Options{VAPIDPublicKey: keys.public, VAPIDPrivateKey: keys.private}
		if got := send(t, sub, message, o); got != http.StatusServiceUnavailable {
			t.Fatalf("first push: status %d, want 503", got)
		}
		if got := send(t, sub, message, o); got != http.StatusCreated {
			t.Fatalf("second push: status %d, want 201", got)
		}
	})

	t.Run("KeyMismatch", func(t *testing.T) {
		// Signed with one private key while k claims another public key.
		other := newVAPID(t)
		sub := svc.Subscribe(t, "ok", 0)
		status := send(t, toWebpush(t, sub), message, webpush.Options{VAPIDPublicKey: other.public, VAPIDPrivateKey: keys.private})
		if status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", status)
		}
		p := only(t, svc.Received(t), sub.Endpoint)
		if !strings.Contains(p.Error, "signature") || p.K != other.public {
			t.Errorf("error %q, k %q; want a signature error and k %q", p.Error, p.K, other.public)
		}
	})

	t.Run("TamperedSignature", func(t *testing.T) {
		sub := svc.Subscribe(t, "ok", 0)
		status := send(t, toWebpush(t, sub), message, webpush.Options{
			VAPIDPublicKey:  keys.public,
			VAPIDPrivateKey: keys.private,
			HTTPClient:      tamper{},
		})
		if status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", status)
		}
		if p := only(t, svc.Received(t), sub.Endpoint); !strings.Contains(p.Error, "signature") {
			t.Errorf("error %q, want a signature error", p.Error)
		}
	})

	t.Run("WrongKeys", func(t *testing.T) {
		// Encrypted to B's keys but sent to A's endpoint.
		a, b := svc.Subscribe(t, "ok", 0), svc.Subscribe(t, "ok", 0)
		wrong := toWebpush(t, b)
		wrong.Endpoint = a.Endpoint
		status := send(t, wrong, message, webpush.Options{VAPIDPublicKey: keys.public, VAPIDPrivateKey: keys.private})
		if status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", status)
		}
		p := only(t, svc.Received(t), a.Endpoint)
		if !strings.Contains(p.Error, "decrypt") || p.Payload != nil && string(p.Payload) != "null" {
			t.Errorf("error %q, payload %s; want a decrypt error and no payload", p.Error, p.Payload)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		const n = 8
		subs := make([]pushtest.Subscription, n)
		for i := range subs {
			subs[i] = svc.Subscribe(t, "ok", 0)
		}
		var wg sync.WaitGroup
		statuses := make([]int, n)
		errs := make([]error, n)
		for i := range subs {
			wg.Go(func() {
				o := webpush.Options{Subscriber: "ops@example.com", TTL: 60, VAPIDPublicKey: keys.public, VAPIDPrivateKey: keys.private}
				resp, err := webpush.SendNotificationWithContext(context.Background(), fmt.Appendf(nil, `{"n":%d}`, i), toWebpushQuiet(subs[i]), &o)
				if err != nil {
					errs[i] = err
					return
				}
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			})
		}
		wg.Wait()
		for i := range subs {
			if errs[i] != nil || statuses[i] != http.StatusCreated {
				t.Errorf("push %d: status %d, error %v", i, statuses[i], errs[i])
			}
		}
		pushes := svc.WaitFor(t, "8 pushes, one to each subscription", func(ps []pushtest.Push) bool {
			for _, s := range subs {
				if !has(ps, s.Endpoint) {
					return false
				}
			}
			return true
		})
		for i, s := range subs {
			p := only(t, pushes, s.Endpoint)
			if p.Error != "" || !samePayload(t, p.Payload, fmt.Sprintf(`{"n":%d}`, i)) {
				t.Errorf("push %d: error %q, payload %s", i, p.Error, p.Payload)
			}
		}
	})
}

// TestWebpushGo pins what webpush-go v1.4.0 does that a caller must know.
func TestWebpushGo(t *testing.T) {
	svc := pushtest.Start(t)
	keys := newVAPID(t)
	push := func(t *testing.T, o webpush.Options) pushtest.Push {
		t.Helper()
		o.VAPIDPublicKey, o.VAPIDPrivateKey = keys.public, keys.private
		sub := svc.Subscribe(t, "ok", 0)
		send(t, toWebpush(t, sub), message, o)
		return only(t, svc.Received(t), sub.Endpoint)
	}

	t.Run("SubscriberGetsMailto", func(t *testing.T) {
		// It adds "mailto:" unless the subscriber starts with "https:", even when it
		// already starts with "mailto:".
		if p := push(t, webpush.Options{Subscriber: "mailto:ops@example.com"}); p.Sub != "mailto:mailto:ops@example.com" {
			t.Errorf("sub %q", p.Sub)
		}
		if p := push(t, webpush.Options{Subscriber: "https://parley.example/"}); p.Sub != "https://parley.example/" {
			t.Errorf("sub %q", p.Sub)
		}
	})

	t.Run("PadsToRecordSize", func(t *testing.T) {
		// Every body is padded to the whole 4096-byte record, whatever the message.
		if p := push(t, webpush.Options{}); p.Bytes != 4096 || p.Error != "" {
			t.Errorf("bytes %d, error %q", p.Bytes, p.Error)
		}
	})

	t.Run("VapidExpirationIgnored", func(t *testing.T) {
		// Options.VapidExpiration is not used: exp is always about 12 h from now.
		now := time.Now()
		p := push(t, webpush.Options{VapidExpiration: now.Add(time.Hour)})
		if d := time.Unix(p.Exp, 0).Sub(now); d < 11*time.Hour || d > 13*time.Hour {
			t.Errorf("exp is %v from now", d)
		}
	})
}

// tamper flips one bit of the VAPID JWT's signature before sending.
type tamper struct{}

func (tamper) Do(req *http.Request) (*http.Response, error) {
	h := req.Header.Get("Authorization")
	start := strings.Index(h, "t=") + 2
	end := start + strings.Index(h[start:], ",")
	jwt := strings.Split(h[start:end], ".")
	sig, err := base64.RawURLEncoding.DecodeString(jwt[2])
	if err != nil {
		return nil, err
	}
	sig[10] ^= 1
	jwt[2] = base64.RawURLEncoding.EncodeToString(sig)
	req.Header.Set("Authorization", h[:start]+strings.Join(jwt, ".")+h[end:])
	return http.DefaultClient.Do(req)
}

// toWebpushQuiet is toWebpush for goroutines, which must not call t.Fatal.
func toWebpushQuiet(sub pushtest.Subscription) *webpush.Subscription {
	s := &webpush.Subscription{Endpoint: sub.Endpoint}
	s.Keys.P256dh, s.Keys.Auth = sub.Keys.P256dh, sub.Keys.Auth
	return s
}

func has(pushes []pushtest.Push, endpoint string) bool {
	for _, p := range pushes {
		if p.Subscription == endpoint {
			return true
		}
	}
	return false
}

// only returns the one push to endpoint, failing when there is not exactly one.
func only(t *testing.T, pushes []pushtest.Push, endpoint string) pushtest.Push {
	t.Helper()
	var found []pushtest.Push
	for _, p := range pushes {
		if p.Subscription == endpoint {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d pushes to %s, want 1: %+v", len(found), endpoint, pushes)
	}
	return found[0]
}
