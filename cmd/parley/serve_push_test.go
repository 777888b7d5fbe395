package main

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// Word of a built-in agent's questions to a device survives a stop and a crash: a push under
// way when Parley is told to stop (SIGTERM) does not hold up the stop, and goes after the
// restart; one under way at kill -9 goes after the next start; each question's push arrives,
// and none twice.
func TestServe_PushesOutliveSIGTERMAndKill9(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	token := annWithToken(t, db)
	var mu sync.Mutex
	var topics []string         // the pushes taken, by their Topic (the question)
	hang := make(chan struct{}) // closed: the push service answers at once
	hanging := make(chan struct{}, 10)
	var inflight atomic.Int32
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Add(-1)
		io.ReadAll(r.Body)
		select {
		case <-hang:
		default:
			hanging <- struct{}{}
			select {
			case <-hang:
			case <-r.Context().Done():
				return // the sender stopped or died: it never heard back, and sends again
			}
		}
		if r.Header.Get("Content-Encoding") != "aes128gcm" || r.Header.Get("Authorization") == "" {
			http.Error(w, "not a push", http.StatusBadRequest)
			return
		}
		mu.Lock()
		topics = append(topics, r.Header.Get("Topic"))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer service.Close()

	var l *liveServer
	var logs *syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last server's log:\n%s", logs.String())
		}
	})
	start := func() {
		logs = &syncBuffer{}
		l = serveLive(t, token, logs, "--db", db, "--channel-networks", "127.0.0.1/32")
	}
	api := func(path string, body any, want int) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, l.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+l.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("POST %s = %d %s, want %d", path, resp.StatusCode, got, want)
		}
	}
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	b64 := base64.RawURLEncoding.EncodeToString
	start()
	api("/api/v1/push/subscriptions", map[string]any{"endpoint": service.URL + "/push/ann-phone",
		"keys": map[string]string{"p256dh": b64(key.PublicKey().Bytes()), "auth": b64(auth)}}, http.StatusCreated)
	plan := map[string]string{"agent": "event-planner", "text": "Plan a party for 30 people"}
	api("/api/v1/conversations", plan, http.StatusCreated)
	<-hanging // the push of the planner's first question is under way when Parley is told to stop
	terminate(t, l, logs)
	start()
	<-hanging // tried again after the restart, and hangs again: kill -9 now
	api("/api/v1/conversations", plan, http.StatusCreated)
	<-hanging
	l.cmd.Process.Kill()
	l.cmd.Wait()
	waitFor(t, "the killed sender's pushes to end", func() bool { return inflight.Load() == 0 })
	close(hang)
	start()
	waitFor(t, "both questions pushed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(topics) > 2 {
			t.Fatalf("%d pushes, want 2: %v", len(topics), topics)
		}
		return len(topics) == 2
	})
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), topics...)
	}
	if got := taken(); got[0] == got[1] || got[0] == "" {
		t.Fatalf("the pushes' topics %v: want one of each question", got)
	}
	// Nothing else waits to go: a third question's push comes, and nothing besides it.
	api("/api/v1/conversations", plan, http.StatusCreated)
	waitFor(t, "the third question pushed", func() bool { return len(taken()) >= 3 })
	if got := taken(); len(got) != 3 {
		t.Fatalf("pushes %v, want three, one per question", got)
	}
}
