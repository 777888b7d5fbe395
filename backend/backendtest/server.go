package backendtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// StaleServer is an HTTP server that hangs up, with a reset, on every request that arrives on
// a connection it already answered on: what a server's keep-alive timeout does to a client
// that sends just as it closes the idle connection. The answer to the nth request that
// gets one (from 0) is respond(n): its content type and body.
type StaleServer struct {
	URL string
	mu  sync.Mutex
	// Answered counts the requests answered; Reset those hung up on.
	answered, reset int
}

// NewStaleServer serves until the test ends.
func NewStaleServer(t testing.TB, respond func(n int, req *http.Request) (contentType, body string)) *StaleServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &StaleServer{URL: "http://" + l.Addr().String()}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go s.serve(conn, respond)
		}
	}()
	return s
}

func (s *StaleServer) serve(conn net.Conn, respond func(int, *http.Request) (string, string)) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for first := true; ; first = false {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		if !first {
			// The whole request is read first, so that the client waits for its answer and
			// meets the reset there, as it does when the server's close crosses its request.
			_, _ = io.Copy(io.Discard, req.Body)
			s.mu.Lock()
			s.reset++
			s.mu.Unlock()
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, not a clean close
			}
			return
		}
		s.mu.Lock()
		n := s.answered
		s.answered++
		s.mu.Unlock()
		contentType, body := respond(n, req)
		_, _ = io.Copy(io.Discard, req.Body)
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", contentType, len(body), body)
	}
}

// Counts reports the requests answered and those hung up on.
func (s *StaleServer) Counts() (answered, reset int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered, s.reset
}
