package main

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
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
	// The push service: the pushes taken, by their Topic (the question).
	service := holdRequests(t, func(r *http.Request, _ []byte) (int, string) {
		if r.Header.Get("Content-Encoding") != "aes128gcm" || r.Header.Get("Authorization") == "" {
			return http.StatusBadRequest, ""
		}
		return http.StatusCreated, r.Header.Get("Topic")
	})
	srv := newRestartable(t, token, "--db", db, "--channel-networks", "127.0.0.1/32")
	api := func(path string, body any, want int) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, srv.L.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+srv.L.Token)
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
	srv.Start()
	api("/api/v1/push/subscriptions", map[string]any{"endpoint": service.URL + "/push/ann-phone",
		"keys": map[string]string{"p256dh": b64(key.PublicKey().Bytes()), "auth": b64(auth)}}, http.StatusCreated)
	plan := map[string]string{"agent": "event-planner", "text": "Plan a party for 30 people"}
	api("/api/v1/conversations", plan, http.StatusCreated)
	<-service.Held // the push of the planner's first question is under way when Parley is told to stop
	terminate(t, srv.L, srv.Logs)
	srv.Start()
	<-service.Held // tried again after the restart, and hangs again: kill -9 now
	api("/api/v1/conversations", plan, http.StatusCreated)
	<-service.Held
	srv.Kill()
	waitFor(t, "the killed sender's pushes to end", func() bool { return service.InFlight() == 0 })
	service.Release()
	srv.Start()
	waitFor(t, "both questions pushed", func() bool {
		if n := len(service.Taken()); n > 2 {
			t.Fatalf("%d pushes, want 2: %v", n, service.Taken())
		}
		return len(service.Taken()) == 2
	})
	if got := service.Taken(); got[0] == got[1] || got[0] == "" {
		t.Fatalf("the pushes' topics %v: want one of each question", got)
	}
	// Nothing else waits to go: a third question's push comes, and nothing besides it.
	api("/api/v1/conversations", plan, http.StatusCreated)
	waitFor(t, "the third question pushed", func() bool { return len(service.Taken()) >= 3 })
	if got := service.Taken(); len(got) != 3 {
		t.Fatalf("pushes %v, want three, one per question", got)
	}
}
