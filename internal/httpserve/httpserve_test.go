package httpserve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/parley-chat/parley/internal/httpserve"
)

// The server answers while the context lasts, and Until returns nil once it ends.
func TestUntil_ServesUntilTheContextEnds(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- httpserve.Until(ctx, &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "up")
		})}, l)
	}()
	resp, err := http.Get("http://" + l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "up" {
		t.Errorf("body %q", b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Until: %v, want nil once the context ended", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Until did not return after the context ended")
	}
}

// A listener that fails is an error.
func TestUntil_ReportsAFailedListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := httpserve.Until(context.Background(), &http.Server{}, l); err == nil {
		t.Error("Until on a closed listener: nil error")
	}
}
