// Package pushtest runs a Web Push service for tests (pushservice.mjs, in node) beside a test.
// The service hands out browser-like subscriptions, checks each push's VAPID header and
// decrypts its body with code that is not Parley's (node's crypto and the http_ece package),
// and lists what it got.
package pushtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Service is a running push service.
type Service struct {
	// Origin is the service's scheme://host:port, the aud a VAPID JWT must carry.
	Origin string
	cmd    *exec.Cmd
	stdin  io.Closer
}

// Subscription is a PushSubscription as a browser's PushSubscription.toJSON() gives it, so a
// test can post it as it is.
type Subscription struct {
	Endpoint       string `json:"endpoint"`
	ExpirationTime *int64 `json:"expirationTime"`
	Keys           struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// Push is one push the service got and what it made of it.
type Push struct {
	// Subscription is the endpoint pushed to.
	Subscription string `json:"subscription"`
	// Status is the HTTP status the service answered.
	Status int `json:"status"`
	// TTL is the TTL header, or -1 when it was missing or not a number.
	TTL int `json:"ttl"`
	// K is the VAPID public key from the Authorization header.
	K string `json:"k"`
	// Sub, Aud and Exp are the VAPID JWT's claims.
	Sub string `json:"sub"`
	Aud string `json:"aud"`
	Exp int64  `json:"exp"`
	// Payload is the decrypted body, or null when it did not decrypt to JSON.
	Payload json.RawMessage `json:"payload"`
	// Error says what failed, joined with "; ", or is empty.
	Error string `json:"error"`
	// Bytes is the length of the encrypted body.
	Bytes int `json:"bytes"`
	// Urgency is the Urgency header, or empty.
	Urgency string `json:"urgency"`
}

// script is the path of pushservice.mjs, found beside this file so that any package's test
// can start it.
func script() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("pushtest: cannot tell where its source file is")
	}
	return filepath.Join(filepath.Dir(file), "pushservice.mjs"), nil
}

// Start runs the push service until the test ends. The test fails when node or the http_ece
// package is missing.
func Start(t testing.TB) *Service {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the push test service needs node on PATH: %v", err)
	}
	path, err := script()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(filepath.Dir(path), "..", "..")
	if _, err := os.Stat(filepath.Join(root, "node_modules", "http_ece", "package.json")); err != nil {
		t.Fatalf("the push test service needs the http_ece package (run npm ci): %v", err)
	}
	cmd := exec.Command(node, path)
	cmd.Stderr = os.Stderr
	// The service stops when its stdin closes, so it does not outlive a test that dies.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Service{cmd: cmd, stdin: stdin}
	t.Cleanup(s.stop)

	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		var v struct{ Origin string }
		if !ok || json.Unmarshal([]byte(l), &v) != nil || v.Origin == "" {
			t.Fatalf("the push test service did not start: first line %q", l)
		}
		s.Origin = v.Origin
	case <-time.After(30 * time.Second):
		t.Fatal("the push test service did not start within 30 s")
	}
	return s
}

// stop closes the service's stdin, which ends it, and kills it if it is still there after 5 s.
func (s *Service) stop() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// Subscribe makes a new subscription with its own keys. mode is "ok" (pushes get 201),
// "gone" (410, every time) or "busy" (503 for the first fails pushes, then 201).
func (s *Service) Subscribe(t testing.TB, mode string, fails int) Subscription {
	t.Helper()
	body, err := json.Marshal(map[string]any{"mode": mode, "fails": fails})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.Origin+"/subscriptions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("subscribe %s: status %d: %s", mode, resp.StatusCode, got)
	}
	var sub Subscription
	if err := json.Unmarshal(got, &sub); err != nil {
		t.Fatalf("subscribe %s: %v: %s", mode, err, got)
	}
	return sub
}

// Received lists every push the service got so far, oldest first.
func (s *Service) Received(t testing.TB) []Push {
	t.Helper()
	resp, err := http.Get(s.Origin + "/received")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /received: status %d", resp.StatusCode)
	}
	var pushes []Push
	if err := json.NewDecoder(resp.Body).Decode(&pushes); err != nil {
		t.Fatalf("GET /received: %v", err)
	}
	return pushes
}

// WaitFor asks for the pushes every 20 ms until ok holds for them, and returns them. After
// 30 s the test fails, saying what it waited for and showing the pushes so far.
func (s *Service) WaitFor(t testing.TB, what string, ok func([]Push) bool) []Push {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pushes := s.Received(t)
		if ok(pushes) {
			return pushes
		}
		if time.Now().After(deadline) {
			shown, _ := json.MarshalIndent(pushes, "", "  ")
			t.Fatalf("waited 30 s for %s; the pushes so far:\n%s", what, shown)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
