package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/web"
)

func TestStream_Heartbeat(t *testing.T) {
	db := newDB(t)
	srv := web.NewServer(web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runnerFor(db), Heartbeat: 30 * time.Millisecond})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Shutdown(context.Background())
	_, err := db.CreateConversation(context.Background(), 0, "none", "quiet", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/c/1/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("X-Accel-Buffering"); got != "no" {
		t.Errorf("X-Accel-Buffering = %q, want no", got)
	}
	var got strings.Builder
	buf := make([]byte, 4096)
	for strings.Count(got.String(), ": heartbeat\n\n") < 2 {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended before two heartbeats: %v; got %q", err, got.String())
		}
		got.Write(buf[:n])
	}
}
