package webtest

import (
	"strings"
	"testing"
	"time"
)

// WaitLine reads a stream's lines until one holds want, failing when the stream ends first
// or after 15 s.
func WaitLine(t testing.TB, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended before it said %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("the stream never said %q", want)
		}
	}
}
