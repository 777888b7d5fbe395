package wire_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/parley-chat/parley/internal/wire"
)

// events reads a whole stream; the last item is the error that ended it.
func events(r *wire.Reader) (got []string, err error) {
	for {
		ev, err := r.Next()
		if err != nil {
			return got, err
		}
		s := ev.Name + "|" + string(ev.Data)
		if ev.ID != "" {
			s += "|id " + ev.ID
		}
		if ev.Cut {
			s += "|cut"
		}
		got = append(got, s)
	}
}

// The reader reads the SSE format as browsers do: joined data lines, LF and CRLF, comments
// and other fields left, an event name, events without data dropped, and a last event
// without its blank line (marked cut).
func TestReader_Format(t *testing.T) {
	in := ": hi\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\n\ndata:{\"b\":2}\nid: 7\nretry: 10\n\n" +
		"event: skipped\n\ndata\ndata:  two spaces\n\ndata: {\"c\":3}"
	got, err := events(wire.NewReader(strings.NewReader(in), 1<<10))
	want := []string{"message|{\"a\":\n1}", `|{"b":2}|id 7`, "|\n two spaces", `|{"c":3}|cut`}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || !errors.Is(err, io.EOF) {
		t.Fatalf("got %q (%v), want %q", got, err, want)
	}
}

// A stream that arrives a byte at a time, with lines longer than the buffer, reads the same.
func TestReader_ByteAtATimeAndLongLines(t *testing.T) {
	long := strings.Repeat("x", 10000)
	in := "data: " + long + "\r\n\r\n: " + long + "\n\ndata: end\n\n"
	got, err := events(wire.NewReader(iotest.OneByteReader(strings.NewReader(in)), 20000))
	if len(got) != 2 || got[0] != "|"+long || got[1] != "|end" || !errors.Is(err, io.EOF) {
		t.Fatalf("got %d events (%v): %.40q", len(got), err, got)
	}
}

// An event, or a line, past the limit is an error naming the limit, not a stream held in
// memory without end.
func TestReader_TooLarge(t *testing.T) {
	for name, in := range map[string]string{
		"one line":   "data: " + strings.Repeat("x", 5000) + "\n\n",
		"many lines": strings.Repeat("data: "+strings.Repeat("x", 100)+"\n", 50) + "\n",
		"a comment":  ": " + strings.Repeat("x", 9000),
	} {
		_, err := events(wire.NewReader(strings.NewReader(in), 4<<10))
		var tl *wire.TooLargeError
		if !errors.As(err, &tl) || err.Error() != "an event is larger than 4 KiB" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A read error other than the end of the stream is returned as it is.
func TestReader_Error(t *testing.T) {
	boom := errors.New("connection reset")
	r := wire.NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 1<<10)
	got, err := events(r)
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %q, %v", got, err)
	}
}

// Activity is called for every line, keep-alive comments included.
func TestReader_Activity(t *testing.T) {
	r := wire.NewReader(strings.NewReader(": ping\n\n: ping\n\ndata: x\n\n"), 1<<10)
	n := 0
	r.Activity = func() { n++ }
	got, _ := events(r)
	if len(got) != 1 || n != 6 {
		t.Fatalf("%d events, %d lines seen", len(got), n)
	}
}
