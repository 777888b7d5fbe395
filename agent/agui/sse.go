package agui

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxEventBytes bounds one event: a state snapshot or a long tool result fits, a stream
// that never ends an event does not.
const maxEventBytes = 8 << 20

// sseReader reads the data of server-sent events: "data:" lines, joined by newlines, up to
// the blank line that ends an event. Comments (":" lines), event names, ids and retry
// times are read and left: AG-UI sends everything in data.
type sseReader struct {
	r   *bufio.Reader
	buf bytes.Buffer
	// activity, when set, is called for every line read, keep-alive comments included.
	activity func()
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// errTooLarge is an event past maxEventBytes.
var errTooLarge = fmt.Errorf("an event is larger than %d MiB", maxEventBytes>>20)

// next returns the data of the next event with data; io.EOF once the stream has ended.
func (s *sseReader) next() ([]byte, error) {
	s.buf.Reset()
	has := false
	for {
		line, err := s.line()
		if err == nil && s.activity != nil {
			s.activity()
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if has {
					// A last event without its blank line still counts: its lines came whole.
					return s.buf.Bytes(), nil
				}
			}
			return nil, err
		}
		if len(line) == 0 {
			if has {
				return s.buf.Bytes(), nil
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(name) == 0 {
			continue // a comment
		}
		if string(name) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if has {
			s.buf.WriteByte('\n')
		}
		has = true
		if s.buf.Len()+len(value) > maxEventBytes {
			return nil, errTooLarge
		}
		s.buf.Write(value)
	}
}

// line reads one line without its end (LF or CRLF).
func (s *sseReader) line() ([]byte, error) {
	var out []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxEventBytes+64 {
			return nil, errTooLarge
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if len(out) > 0 && errors.Is(err, io.EOF) {
				return bytes.TrimRight(out, "\r"), nil
			}
			return nil, err
		}
		out = bytes.TrimSuffix(out[:len(out)-1], []byte("\r"))
		return out, nil
	}
}
