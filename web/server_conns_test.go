package web_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/parley-chat/parley/web"
)

// A connection that never sends a request (a browser's preconnect, a client's spare dial)
// does not hold up a shutdown: net/http alone waits 5 s for it, past the half of the grace
// Shutdown gets.
func TestShutdown_ClosesConnectionsThatSentNothing(t *testing.T) {
	db := newDB(t)
	srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runnerFor(db), Heartbeat: time.Hour})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	// One of them asks for something, and waits for the next request: an idle connection.
	if _, err := conns[0].Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	if _, err := conns[0].Read(buf); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with connections that sent nothing: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
