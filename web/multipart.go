package web

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"net/http"
)

// tolerantParts lets a multipart form whose part headers hold control characters be read.
// A browser sends a file's name as it is on disk, escaping only quotes and line breaks, so
// a file named "a\x01b.txt" arrives with a raw control byte in its Content-Disposition;
// Go's MIME reader refuses such a header and with it the whole form: the answer, the
// decline, the message. The control characters are dropped from the part headers (the file
// name is cleaned later anyway, see domain.FileName); the parts' contents pass untouched.
func tolerantParts(r *http.Request) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" || r.Body == nil {
		return
	}
	r.Body = &partHeaderFilter{ReadCloser: r.Body, r: bufio.NewReaderSize(r.Body, 64<<10),
		dash: []byte("--" + params["boundary"]), lineStart: true}
}

// partHeaderFilter reads a multipart body line by line, as mime/multipart finds its
// delimiters: "--boundary" at the start of a line after a line break (CRLF, unless the first
// delimiter ended in a bare LF), then optional white space and the line's end, or "--" for
// the last. A delimiter begins a part's headers, and an empty line ends them.
type partHeaderFilter struct {
	io.ReadCloser // the request's body, closed by Close
	r             *bufio.Reader
	dash          []byte // "--" and the boundary

	lineStart  bool // the next byte begins a line
	prevCRLF   bool // the line before ended in CRLF
	pendingCR  bool // the piece before ended in CR, and the line's LF may come next
	bareLF     bool // the delimiters end in a bare LF
	seenDelim  bool
	inHeaders  bool
	pending    []byte
	err        error
	headerLine []byte
}

func (f *partHeaderFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending = f.next()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// next reads one line (or a piece of a long one) and returns it as the parser should see it.
func (f *partHeaderFilter) next() []byte {
	line, err := f.r.ReadSlice('\n')
	if err != nil && err != bufio.ErrBufferFull {
		f.err = err
	}
	start, whole := f.lineStart, err == nil
	f.lineStart = whole
	// A line longer than the buffer comes in pieces; its CRLF may be split between two.
	crlf := bytes.HasSuffix(line, []byte("\r\n")) || f.pendingCR && string(line) == "\n"
	f.pendingCR = !whole && bytes.HasSuffix(line, []byte("\r"))
	prevCRLF := f.prevCRLF
	if whole {
		f.prevCRLF = crlf
	}
	if start && (!f.seenDelim || f.bareLF || prevCRLF) {
		if ok, final := f.delimiter(line); ok {
			if !f.seenDelim {
				f.seenDelim, f.bareLF = true, whole && !crlf
			}
			f.inHeaders = !final
			return line
		}
	}
	if !f.inHeaders {
		return line
	}
	if start && (string(line) == "\r\n" || string(line) == "\n") {
		f.inHeaders = false
		return line
	}
	// A header line: every control byte goes but tab and the line's own ending.
	end := 0
	switch {
	case crlf && len(line) >= 2:
		end = 2
	case whole || bytes.HasSuffix(line, []byte("\r")):
		end = 1 // "\n", or a "\r" whose "\n" comes in the next piece
	}
	out := f.headerLine[:0]
	for _, c := range line[:len(line)-end] {
		if c >= 0x20 && c != 0x7f || c == '\t' {
			out = append(out, c)
		}
	}
	if start && whole && len(out) == 0 {
		f.inHeaders = false // nothing but control bytes: the parser now reads an empty line
	}
	f.headerLine = append(out, line[len(line)-end:]...)
	return f.headerLine
}

// delimiter reports whether line is a boundary delimiter as mime/multipart reads one, and
// whether it is the last: "--boundary" (and "--" for the last), optional spaces and tabs,
// then the line break the delimiters use; the last may also end the body.
func (f *partHeaderFilter) delimiter(line []byte) (ok, final bool) {
	if !bytes.HasPrefix(line, f.dash) {
		return false, false
	}
	rest := line[len(f.dash):]
	if final = bytes.HasPrefix(rest, []byte("--")); final {
		rest = rest[2:]
	}
	rest = bytes.TrimLeft(rest, " \t")
	switch {
	case len(rest) == 0:
		return final, final
	case !f.seenDelim:
		return string(rest) == "\r\n" || string(rest) == "\n", final
	case f.bareLF:
		return string(rest) == "\n", final
	}
	return string(rest) == "\r\n", final
}
