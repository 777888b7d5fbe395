package web

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/views"
)

// sseWriter writes a conversation stream's events into a buffer that goes out in one write
// and one flush: a stream that woke for many changes sends them together. It speaks the
// Datastar SSE protocol (datastar-patch-elements, datastar-patch-signals), plus
// datastar-md, the compact event that grows a streaming message (see views.MarkdownStream
// and app.js): a token costs 24 bytes of framing instead of about 100.
type sseWriter struct {
	w   io.Writer
	rc  *http.ResponseController // nil when w is the connection itself
	buf []byte
}

// newSSEWriter writes to the connection of a hijacked response, or through a response
// writer (flushed after each write) when w is one.
func newSSEWriter(w io.Writer) *sseWriter {
	s := &sseWriter{w: w, buf: make([]byte, 0, 512)}
	if rw, ok := w.(http.ResponseWriter); ok {
		s.rc = http.NewResponseController(rw)
	}
	return s
}

// flush sends what was written since the last flush.
func (s *sseWriter) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.w.Write(s.buf)
	if cap(s.buf) > 1<<10 {
		s.buf = make([]byte, 0, 512) // a catch-up's buffer is not kept by an idle stream
	} else {
		s.buf = s.buf[:0]
	}
	if err != nil || s.rc == nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseWriter) begin(event, id string) {
	s.buf = append(s.buf, "event:"...)
	s.buf = append(s.buf, event...)
	s.buf = append(s.buf, '\n')
	if id != "" {
		s.buf = append(s.buf, "id:"...)
		s.buf = append(s.buf, id...)
		s.buf = append(s.buf, '\n')
	}
}

func (s *sseWriter) end() { s.buf = append(s.buf, '\n') }

// data writes the value as data lines "key value", one per line of the value. A bare
// carriage return would end an SSE line and let agent text forge fields (an id, a selector):
// it is written as a character reference (text has none: Output turns them into line feeds).
func (s *sseWriter) data(key, value string) {
	for {
		line, rest, more := strings.Cut(value, "\n")
		s.buf = append(s.buf, "data:"...)
		s.buf = append(s.buf, key...)
		s.buf = append(s.buf, ' ')
		for i := 0; i < len(line); i++ {
			if c := line[i]; c == '\r' {
				s.buf = append(s.buf, "&#13;"...)
			} else {
				s.buf = append(s.buf, c)
			}
		}
		s.buf = append(s.buf, '\n')
		if !more {
			return
		}
		value = rest
	}
}

// patchElements patches the page: mode "" morphs the elements into those with their ids.
func (s *sseWriter) patchElements(html, selector, mode, id string) {
	s.begin("datastar-patch-elements", id)
	if selector != "" {
		s.data("selector", selector)
	}
	if mode != "" {
		s.data("mode", mode)
	}
	s.data("elements", html)
	s.end()
}

func (s *sseWriter) patchSignals(json, id string) {
	s.begin("datastar-patch-signals", id)
	s.data("signals", json)
	s.end()
}

// markdown writes how a streaming message grows, as a "datastar" event: the shortest type
// the Datastar client dispatches (it drops types that do not begin with "datastar"), so that
// a token costs 24 bytes besides its text; app.js applies it. withLen adds the length of the
// text so far, for a reader that counts text (parley bench): the page has no use for it.
func (s *sseWriter) markdown(p views.MarkdownPatch, id string, withLen bool) {
	s.begin("datastar", id)
	if p.Splice {
		s.data("s", strconv.Itoa(p.SpliceAt)+" "+strconv.Itoa(p.SpliceKeep)+" "+p.SpliceHTML)
	}
	if p.Append != "" {
		s.data("a", p.Append)
	}
	if p.Freeze {
		s.data("f", "1")
	}
	if p.Blocks != "" {
		s.data("b", p.Blocks)
	}
	if p.Open {
		s.data("o", p.OpenHTML)
	}
	if p.End && !p.At.IsZero() {
		s.data("e", p.At.UTC().Format(time.RFC3339Nano))
	} else if p.End {
		s.data("e", "1")
	}
	if withLen && (p.Append == "" || p.Splice || p.Freeze || p.Blocks != "" || p.Open || p.End) {
		s.data("n", strconv.Itoa(p.Len))
	}
	s.end()
}

// json writes an event whose data is one line of JSON (which escapes every line break).
func (s *sseWriter) json(event, id string, b []byte) {
	s.begin(event, id)
	s.buf = append(s.buf, "data:"...)
	s.buf = append(s.buf, b...)
	s.buf = append(s.buf, '\n')
	s.end()
}

// comment writes an SSE comment, which keeps the connection alive.
func (s *sseWriter) comment(text string) {
	s.buf = append(s.buf, ": "...)
	s.buf = append(s.buf, text...)
	s.buf = append(s.buf, "\n\n"...)
}
