package notify

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestNetworks_CheckURL(t *testing.T) {
	none := Networks(nil)
	lan, err := ParseNetworks("192.168.5.0/24, 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if got := lan.String(); got != "192.168.5.0/24,127.0.0.1/32" {
		t.Errorf("parsed networks = %s", got)
	}
	for _, tc := range []struct {
		rule Networks
		url  string
		push bool
		ok   bool
	}{
		{none, "https://hooks.slack.com/services/x", false, true},
		{none, "https://93.184.215.14/hook", false, true},
		{none, "http://127.0.0.1:8080/hook", false, false},
		{none, "http://localhost:8080/hook", false, false},
		{none, "http://app.localhost/hook", false, false},
		{none, "http://[::1]:80/", false, false},
		{none, "http://10.2.3.4/", false, false},
		{none, "http://172.16.0.1/", false, false},
		{none, "http://192.168.1.1/", false, false},
		{none, "http://169.254.169.254/latest/meta-data/", false, false}, // the cloud metadata address
		{none, "http://[fe80::1]/", false, false},
		{none, "http://[fd00::1]/", false, false},
		{none, "http://[::ffff:127.0.0.1]/", false, false},
		{none, "http://[64:ff9b::a9fe:a9fe]/", false, false}, // NAT64 of 169.254.169.254
		{none, "http://[64:ff9b::5db8:d70e]/", false, true},  // NAT64 of a public address: a DNS64 network's webhook
		{none, "http://[2002:a00:1::]/", false, false},       // 6to4 of 10.0.0.1
		{none, "http://[64:ff9b::a00:1%25eth0]/", false, false},
		{none, "http://[::ffff:0:a00:1]/", false, false},
		{none, "http://[fec0::1]/", false, false},
		{none, "http://[::a00:1]/", false, false},
		{none, "http://10abc/", false, true}, // a name, looked at when dialled
		{none, "http://0.0.0.0/", false, false},
		{none, "http://100.64.0.1/", false, false},
		{none, "http://2130706433/", false, false}, // 127.0.0.1 as one number
		{none, "http://0x7f000001/", false, false},
		{none, "http://0177.0.0.1/", false, false},
		{none, "http://127.1/", false, false},
		{lan, "http://127.0.0.1:8080/hook", false, true},
		{lan, "http://192.168.5.20/hooks/x", false, true},
		{lan, "http://192.168.6.20/hooks/x", false, false},
		{lan, "http://10.0.0.1/", false, false},
		// Push endpoints: https anywhere public; plain http only inside a listed network.
		{none, "https://fcm.googleapis.com/fcm/send/x", true, true},
		{none, "http://push.example/x", true, false},
		{none, "http://93.184.215.14/x", true, false},
		{lan, "http://127.0.0.1:9000/push/1", true, true},
		{lan, "http://push.example/x", true, false},
	} {
		err := tc.rule.CheckURL(tc.url, tc.push)
		if (err == nil) != tc.ok {
			t.Errorf("rule %s, CheckURL(%q, push %v) = %v, want ok %v", tc.rule, tc.url, tc.push, err, tc.ok)
		}
	}
	if _, err := ParseNetworks("10.0.0.0/33"); err == nil {
		t.Error("a prefix longer than an address is taken")
	}
	if _, err := ParseNetworks("intranet"); err == nil {
		t.Error("a name is taken as a network")
	}
}

// The rule holds on the address dialled: a name that resolves to loopback is refused at the
// dial, a listed network lets it through, and a redirect is not followed.
func TestNetworks_Client(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	_, err := Networks(nil).Client(5*time.Second, false).Get(byName)
	var refused *RefusedError
	if err == nil || !errors.As(err, &refused) || !refused.Addr.IsLoopback() {
		t.Fatalf("a name resolving to loopback, without the network listed: %v, want a refusal of a loopback address", err)
	}
	if hits != 0 {
		t.Fatalf("the receiver was reached %d times", hits)
	}
	allowed := Networks{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	resp, err := allowed.Client(5*time.Second, false).Get(byName)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("with loopback listed: %v %v", resp, err)
	}
	resp, err = allowed.Client(5*time.Second, false).Get(srv.URL + "/away")
	if err != nil || resp.StatusCode != http.StatusFound || hits != 2 {
		t.Fatalf("a redirect: status %v, err %v, hits %d; want 302 answered and not followed", resp, err, hits)
	}
}

// The VAPID subject is an address push services (Apple's among them) accept.
func TestSubject(t *testing.T) {
	for s, ok := range map[string]bool{
		"https://parley.example":     true,
		"mailto:ops@example.com":     true,
		"ops@example.com":            true,
		"http://parley.example":      false,
		"https://localhost":          false,
		"parley@localhost":           false,
		"parley@0.0.0.0":             false,
		"mailto:parley@[::]":         false,
		"Ops <ops@example.com>":      false,
		"not an address":             false,
		"https://192.168.1.5:8443/x": true,
	} {
		if got := Subject(s); got != ok {
			t.Errorf("Subject(%q) = %v, want %v", s, got, ok)
		}
	}
}
