// Package wire reads what agents stream to Parley: server-sent events, and the JSON in them
// without building more than the caller reads. The back ends that stream over HTTP (an
// OpenAI-compatible model, an AG-UI agent, an A2A agent) and Parley's own API client share
// it, so that a token costs a line read and a few fields scanned, not a struct tree built
// and dropped.
//
// Reader follows the WHATWG's rules for an event stream exactly (sse_test.go holds it to
// the eventsource-parser package, a separate implementation of the same rules, on
// arbitrary input); Scanner reads JSON leniently, as encoding/json would.
package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// TooLargeError is an event, or a line, past the Reader's limit.
type TooLargeError struct{ Size, Max int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("an event is larger than %s", size(e.Max))
}

func size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Event is one server-sent event. Data is valid until the next call of Next.
type Event struct {
	// Name is the event's type, its "event:" field; "" when it has none (a browser's
	// "message").
	Name string
	// ID is the event's own "id:" field, "" when it has none. LastID is the stream's last
	// event ID as the event arrives, the one a browser gives it: set by every "id:" field
	// read so far, those of blocks that were no event included, and kept until the next.
	// An "id:" that contains NUL is ignored, as the standard says.
	ID, LastID string
	// Data is its "data:" lines joined by newlines.
	Data []byte
	// Cut says the stream ended before the blank line that ends the event. The standard
	// drops such an event; a caller that follows it drops it too.
	Cut bool
}

// Reader reads a text/event-stream as the WHATWG's HTML standard interprets one
// ("Interpreting an event stream"):
//   - lines end in CRLF, LF or a CR alone (a CR then a LF is one line end, even when the
//     two arrive in different reads);
//   - one byte-order mark at the very start of the stream is skipped;
//   - a line that starts with ':' is a comment (keep-alives): read, and left;
//   - any other line is a field: its name up to the first ':', its value after it less one
//     leading space (a line without ':' is a field named by the whole line, without value);
//   - "event" names the event, "data" adds a line to its data, "id" sets the last event ID
//     (unless it contains NUL), "retry" the reconnection time in milliseconds (when it is
//     ASCII digits only); any other field is ignored;
//   - a blank line ends the event, which is dispatched when it has data: an event without
//     a "data" field is no event, and the next starts afresh (the last event ID stays).
//
// A last event whose blank line never came is returned marked Cut (a partial last line
// counts as a line), which the standard would drop; see Event.Cut.
// The stream is read as bytes: text that is not UTF-8 is passed on as it came, not decoded
// to U+FFFD as a browser would (the JSON in the data is checked by whoever reads it).
//
// Next returns each event as soon as its blank line has arrived, without reading further.
// Reading an event allocates nothing once the buffers have grown, but for the strings of
// its "event" and "id" fields.
type Reader struct {
	src  io.Reader
	buf  []byte // buf[r:w] has been read and not used yet
	r, w int
	err  error // the error that ended src, returned once buf is used up

	line    []byte // a line longer than buf, put together
	data    []byte
	max     int
	started bool // the byte-order mark has been looked for
	afterCR bool // the last line ended in a CR: a LF right after it belongs to that end
	// cr is the index in buf of the next CR from where lines are looked for, -1 when
	// buf[:crSeen] has none there: so that a stream without CR is looked through for one
	// once, not at every line.
	cr, crSeen int

	lastID   string
	retry    time.Duration
	retrySet bool

	// Activity, when set, is called for every line read, keep-alive comments included.
	Activity func()
}

// bufSize is the Reader's buffer: longer lines are put together in another.
const bufSize = 4096

// NewReader reads events from r, each at most max bytes of data.
func NewReader(r io.Reader, max int) *Reader {
	return newReader(r, max, bufSize)
}

func newReader(r io.Reader, limit, size int) *Reader {
	return &Reader{src: r, buf: make([]byte, max(size, len(bom))), max: limit, cr: -1}
}

// Retry is the reconnection time the stream asked for last with a "retry:" field, and
// whether it asked for one. A time past what time.Duration holds is its largest.
func (s *Reader) Retry() (time.Duration, bool) { return s.retry, s.retrySet }

// Next returns the next event with data; io.EOF once the stream has ended, a *TooLargeError
// for an event past the limit.
func (s *Reader) Next() (Event, error) {
	s.data = s.data[:0]
	name, id := "", ""
	has := false
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && has {
				return Event{Name: name, ID: id, LastID: s.lastID, Data: s.data, Cut: true}, nil
			}
			return Event{}, err
		}
		if s.Activity != nil {
			s.Activity()
		}
		if len(line) == 0 {
			if has {
				return Event{Name: name, ID: id, LastID: s.lastID, Data: s.data}, nil
			}
			name, id = "", ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if has {
				s.data = append(s.data, '\n')
			}
			has = true
			if len(s.data)+len(value) > s.max {
				return Event{}, &TooLargeError{Size: len(s.data) + len(value), Max: s.max}
			}
			s.data = append(s.data, value...)
		case "event":
			name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				if string(value) != s.lastID {
					s.lastID = string(value)
				}
				id = s.lastID
			}
		case "retry":
			if d, ok := millis(value); ok {
				s.retry, s.retrySet = d, true
			}
		}
	}
}

// millis reads a "retry:" value: ASCII digits only, at least one.
func millis(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	const most = math.MaxInt64 / int64(time.Millisecond)
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if d := int64(c - '0'); ms > (most-d)/10 {
			ms = most
		} else {
			ms = ms*10 + d
		}
	}
	return time.Duration(ms) * time.Millisecond, true
}

var bom = []byte("\xef\xbb\xbf")

// readLine reads one line without its end. The line is the buffer's own bytes when it fits
// there, valid until the next read. A last line without an end counts once the stream has
// ended (io.EOF); any other error is returned as it is.
func (s *Reader) readLine() ([]byte, error) {
	for !s.started {
		b := s.buf[s.r:s.w]
		if len(b) >= len(bom) || !bytes.HasPrefix(bom, b) || s.err != nil {
			s.started = true
			if bytes.HasPrefix(b, bom) {
				s.r += len(bom)
			}
			break
		}
		s.fill()
	}
	long := false
	seen := 0 // buf[r:r+seen] holds no line end
	for {
		b := s.buf[s.r:s.w]
		if s.afterCR && len(b) > 0 {
			s.afterCR = false
			if b[0] == '\n' {
				s.r++
				b = b[1:]
			}
		}
		if i := s.lineEnd(s.r + seen); i >= 0 {
			i -= s.r
			s.afterCR = b[i] == '\r'
			s.r += i + 1
			if long {
				return s.longer(b[:i])
			}
			return b[:i], nil
		}
		seen = len(b)
		if s.err != nil {
			if errors.Is(s.err, io.EOF) && (len(b) > 0 || long) {
				s.r = s.w
				if long {
					return s.longer(b)
				}
				return b, nil
			}
			return nil, s.err
		}
		if s.w == len(s.buf) {
			s.cr, s.crSeen = -1, 0
			if s.r > 0 {
				s.w, s.r = copy(s.buf, b), 0
			} else {
				if !long {
					s.line, long = s.line[:0], true
				}
				if _, err := s.longer(b); err != nil {
					return nil, err
				}
				s.w, seen = 0, 0
			}
		}
		s.fill()
	}
}

// longer adds b to a line put together in s.line.
func (s *Reader) longer(b []byte) ([]byte, error) {
	s.line = append(s.line, b...)
	if len(s.line) > s.max+64 {
		return nil, &TooLargeError{Size: len(s.line), Max: s.max}
	}
	return s.line, nil
}

// lineEnd is the index in buf of the first CR or LF in buf[from:w], -1 when there is none.
// from only grows until the buffer's bytes move.
func (s *Reader) lineEnd(from int) int {
	lf := bytes.IndexByte(s.buf[from:s.w], '\n')
	if lf >= 0 {
		lf += from
	}
	if s.cr < from {
		s.cr = -1
		if start := max(from, s.crSeen); start < s.w {
			if i := bytes.IndexByte(s.buf[start:s.w], '\r'); i >= 0 {
				s.cr = start + i
			} else {
				s.crSeen = s.w
			}
		}
	}
	if s.cr >= 0 && (lf < 0 || s.cr < lf) {
		return s.cr
	}
	return lf
}

// fill reads once more into the buffer's free end, which the caller has made room at.
func (s *Reader) fill() {
	for range 100 {
		n, err := s.src.Read(s.buf[s.w:])
		if n > 0 {
			s.w += n
		}
		if err != nil {
			s.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	s.err = io.ErrNoProgress
}
