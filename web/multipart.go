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
// name is cleaned later anyway, see agent.FileName); the parts' contents pass untouched.
func tolerantParts(r *http.Request) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" || r.Body == nil {
		return
	}
	r.Body = &partHeaderFilter{ReadCloser: r.Body, r: bufio.NewReaderSize(r.Body, 64<<10),
		dash: []byte("--" + params["boundary"]), lineStart: true}
}

// partHeaderFilter reads a multipart body line by line, as mime/multipart finds its
// delimiters: a line that starts with "--boundary" after a line break (CRLF, unless the
// first delimiter ended in a bare LF) begins a part's headers, and an empty line ends them.
type partHeaderFilter struct {
	io.ReadCloser // the request's body, closed by Close
	r             *bufio.Reader
	dash          []byte // "--" and the boundary

	lineStart  bool // the next byte begins a line
	prevCRLF   bool // the line before ended in CRLF
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
	crlf := bytes.HasSuffix(line, []byte("\r\n"))
	prevCRLF := f.prevCRLF
	if whole {
		f.prevCRLF = crlf
	}
	switch {
	case start && bytes.HasPrefix(line, f.dash) && (!f.seenDelim || f.bareLF || prevCRLF):
		if !f.seenDelim {
			f.seenDelim, f.bareLF = true, whole && !crlf
		}
		f.inHeaders = !bytes.HasPrefix(line[len(f.dash):], []byte("--"))
		return line
	case !f.inHeaders:
		return line
	case start && (string(line) == "\r\n" || string(line) == "\n"):
		f.inHeaders = false
		return line
	}
	// A header line: every control byte goes but tab and the line's own ending.
	end := 0
	switch {
	case crlf:
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
	f.headerLine = append(out, line[len(line)-end:]...)
	return f.headerLine
}
