// Package wire reads what agents stream to Parley: server-sent events, and the JSON in them
// without building more than the caller reads. The back ends that stream over HTTP (an
// OpenAI-compatible model, an AG-UI agent, an A2A agent) share it, so that a token costs a
// line read and a few fields scanned, not a struct tree built and dropped.
package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
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
	// Name is the event's "event:" field, "" when it has none; ID its "id:" field.
	Name, ID string
	// Data is its "data:" lines joined by newlines.
	Data []byte
	// Cut says the stream ended before the blank line that ends the event.
	Cut bool
}

// Reader reads a text/event-stream: each event's data lines joined by newlines, up to the
// blank line that ends it, as the WHATWG's server-sent events define it. Comments (":"
// lines, the keep-alives), ids and retry times are read and left; an event without data is
// no event. A last event whose blank line never came still counts (marked Cut): its lines
// came whole.
// Lines end in LF or CRLF. Reading an event allocates nothing once the buffers have grown.
type Reader struct {
	r    *bufio.Reader
	data []byte
	line []byte // a line longer than the buffer, put together
	max  int
	// Activity, when set, is called for every line read, keep-alive comments included.
	Activity func()
}

// NewReader reads events from r, each at most max bytes of data.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 4096), max: max}
}

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
				return Event{Name: name, ID: id, Data: s.data, Cut: true}, nil
			}
			return Event{}, err
		}
		if s.Activity != nil {
			s.Activity()
		}
		if len(line) == 0 {
			if has {
				return Event{Name: name, ID: id, Data: s.data}, nil
			}
			name, id = "", ""
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
			id = string(value)
		}
	}
}

// readLine reads one line without its end. The line is the buffer's own bytes when it fits
// there, valid until the next read.
func (s *Reader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.line = append(s.line[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = s.r.ReadSlice('\n')
			s.line = append(s.line, line...)
			if len(s.line) > s.max+64 {
				return nil, &TooLargeError{Size: len(s.line), Max: s.max}
			}
		}
		line = s.line
	}
	if err != nil {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return bytes.TrimSuffix(line, []byte("\r")), nil
		}
		return nil, err
	}
	line = line[:len(line)-1]
	return bytes.TrimSuffix(line, []byte("\r")), nil
}
