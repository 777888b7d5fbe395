package pushtest_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/parley-chat/parley/internal/pushtest"
)

// TestServiceRefuses: the service answers 400, and says why, for each thing a push can get
// wrong. Each case sends a good push with webpush-go and changes one thing on its way.
func TestServiceRefuses(t *testing.T) {
	svc := pushtest.Start(t)
	keys := newVAPID(t)
	now := time.Now().Unix()
	good := map[string]any{"aud": svc.Origin, "exp": now + 3600, "sub": "mailto:ops@example.com"}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for k, v := range good {
			c[k] = v
		}
		c[k] = v
		return c
	}
	header := func(name, value string) func(*http.Request) {
		return func(r *http.Request) {
			if value == "" {
				r.Header.Del(name)
			} else {
				r.Header.Set(name, value)
			}
		}
	}
	auth := func(alg string, claims map[string]any) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", vapidHeader(t, keys, alg, claims)) }
	}
	body := func(change func([]byte) []byte) func(*http.Request) {
		return func(r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				t.Error(err)
			}
			b = change(b)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}
	}

	tests := []struct {
		name      string
		message   string
		options   webpush.Options
		rewrite   func(*http.Request)
		wantError string
	}{
		{name: "OwnHeaderAccepted", rewrite: auth("ES256", good)},
		{name: "ContentEncoding", rewrite: header("Content-Encoding", "aesgcm"), wantError: "Content-Encoding"},
		{name: "NoTTL", rewrite: header("TTL", ""), wantError: "no TTL"},
		{name: "NegativeTTL", rewrite: header("TTL", "-5"), wantError: "TTL"},
		{name: "NoAuthorization", rewrite: header("Authorization", ""), wantError: "no Authorization"},
		{name: "OldScheme", rewrite: header("Authorization", "WebPush abc"), wantError: "Authorization"},
		{name: "Alg", rewrite: auth("ES384", good), wantError: "alg"},
		{name: "Aud", rewrite: auth("ES256", with("aud", "http://127.0.0.1:1")), wantError: "aud"},
		{name: "Expired", rewrite: auth("ES256", with("exp", now-60)), wantError: "exp"},
		{name: "ExpTooLate", rewrite: auth("ES256", with("exp", now+25*3600)), wantError: "24 h"},
		{name: "Sub", rewrite: auth("ES256", with("sub", "ops@example.com")), wantError: "sub"},
		{name: "Truncated", rewrite: body(func(b []byte) []byte { return b[:len(b)-1] }), wantError: "decrypt"},
		{name: "NotJSON", message: "hello", wantError: "payload is not JSON"},
		// webpush-go pads to RecordSize, so a bigger record size makes a body over 4096 bytes.
		{name: "TooBig", options: webpush.Options{RecordSize: 8192}, wantError: "more than 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := svc.Subscribe(t, "ok", 0)
			o := tt.options
			o.VAPIDPublicKey, o.VAPIDPrivateKey = keys.public, keys.private
			if tt.rewrite != nil {
				o.HTTPClient = rewriter(tt.rewrite)
			}
			msg := tt.message
			if msg == "" {
				msg = message
			}
			status := send(t, toWebpush(t, sub), msg, o)
			p := only(t, svc.Received(t), sub.Endpoint)
			if tt.wantError == "" {
				if status != http.StatusCreated || p.Error != "" {
					t.Fatalf("status %d, error %q; want 201 and no error", status, p.Error)
				}
				return
			}
			// One thing changed, so one thing failed.
			if status != http.StatusBadRequest || !strings.Contains(p.Error, tt.wantError) || strings.Contains(p.Error, "; ") {
				t.Fatalf("status %d, error %q; want 400 and only an error about %q", status, p.Error, tt.wantError)
			}
		})
	}
}

// rewriter changes a request before sending it.
type rewriter func(*http.Request)

func (f rewriter) Do(req *http.Request) (*http.Response, error) {
	f(req)
	return http.DefaultClient.Do(req)
}

// vapidHeader builds "vapid t=<JWT>, k=<public key>" with Go's own crypto, signing claims
// with keys' private key whatever alg the JWT's header names.
func vapidHeader(t *testing.T, keys vapid, alg string, claims map[string]any) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(keys.private)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatal(err)
	}
	part := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := part(map[string]string{"typ": "JWT", "alg": alg}) + "." + part(claims)
	sum := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, priv, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return "vapid t=" + signed + "." + base64.RawURLEncoding.EncodeToString(sig) + ", k=" + keys.public
}
