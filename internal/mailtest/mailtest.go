// Package mailtest is a real SMTP server (go-smtp) on loopback for tests: it keeps what it
// is sent, to be read back by recipient.
package mailtest

import (
	"io"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Mailbox is the server and what it was sent.
type Mailbox struct {
	// Port is where it listens, on 127.0.0.1.
	Port int
	mu   sync.Mutex
	msgs []*mail.Message
	to   []string
}

// Start serves a mailbox until the test ends.
func Start(t testing.TB) *Mailbox {
	t.Helper()
	m := &Mailbox{}
	srv := smtp.NewServer(m)
	srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.Port = l.Addr().(*net.TCPAddr).Port
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return m
}

// MailTo returns the n-th mail sent to addr (1 the first), once there is one.
func (m *Mailbox) MailTo(t testing.TB, addr string, n int) *mail.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m.mu.Lock()
		seen := 0
		for i, to := range m.to {
			if to == addr {
				if seen++; seen == n {
					msg := m.msgs[i]
					m.mu.Unlock()
					return msg
				}
			}
		}
		m.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for mail %d to %s", n, addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Count is how many mails went to addr.
func (m *Mailbox) Count(addr string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, to := range m.to {
		if to == addr {
			n++
		}
	}
	return n
}

// NewSession is go-smtp's Backend.
func (m *Mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{m: m}, nil }

type session struct {
	m  *Mailbox
	to string
}

func (s *session) Reset()                                    {}
func (s *session) Logout() error                             { return nil }
func (s *session) Mail(string, *smtp.MailOptions) error      { return nil }
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error { s.to = to; return nil }
func (s *session) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(msg.Body)
	msg.Body = strings.NewReader(string(body))
	s.m.mu.Lock()
	s.m.msgs, s.m.to = append(s.m.msgs, msg), append(s.m.to, s.to)
	s.m.mu.Unlock()
	return nil
}
