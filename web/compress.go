package web

import (
	"bufio"
	"compress/gzip"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// compressMinBytes is the size under which a response goes out as it is: gzip's framing and
// the work would gain nothing on it.
const compressMinBytes = 1 << 10

// compressible reports whether a response of the content type gains from compression:
// pages, stylesheets, scripts, JSON (the API's, the manifest) and SVG. Server-Sent Events
// never are: a compressor holds back what the client should see now.
func compressible(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch t {
	case "text/html", "text/css", "text/javascript", "application/javascript", "application/json", "image/svg+xml":
		return true
	}
	return strings.HasPrefix(t, "application/") && strings.HasSuffix(t, "+json") // manifest, problem
}

// accepts reports whether the request's Accept-Encoding takes the coding (with a q above 0,
// by name or by "*").
func accepts(r *http.Request, coding string) bool {
	star := false
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.TrimSpace(name)
			if !strings.EqualFold(name, coding) && name != "*" {
				continue
			}
			ok := true
			if k, q, found := strings.Cut(strings.TrimSpace(params), "="); found && strings.TrimSpace(k) == "q" {
				f, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
				ok = err == nil && f > 0
			}
			if name != "*" {
				return ok
			}
			star = ok
		}
	}
	return star
}

// varyAcceptEncoding adds Accept-Encoding to the Vary header, once.
func varyAcceptEncoding(h http.Header) {
	for _, v := range h.Values("Vary") {
		for part := range strings.SplitSeq(v, ",") {
			if p := strings.TrimSpace(part); p == "*" || strings.EqualFold(p, "Accept-Encoding") {
				return
			}
		}
	}
	h.Add("Vary", "Accept-Encoding")
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return w
}}

// compressResponses gzips the responses of a compressible type (see compressible) for a
// client that accepts it. What to do is decided when the response starts, by its headers,
// whatever route answered: an SSE stream, one already encoded (the precompressed static
// files), a short one or a 304 goes out as it is. A response of unknown length is held back
// until it passes compressMinBytes, or until it ends or is flushed short of that.
func compressResponses(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &compressWriter{ResponseWriter: w, gzip: r.Method != http.MethodHead && accepts(r, "gzip")}
		defer cw.close()
		next.ServeHTTP(cw, r)
	})
}

// compressWriter is the response writer of compressResponses.
type compressWriter struct {
	http.ResponseWriter
	gzip bool // the client takes gzip

	status   int          // set once the handler has written its header
	held     []byte       // the body so far, while undecided
	gz       *gzip.Writer // set once compressing
	decided  bool         // the header has gone out, encoded by gz or not
	hijacked bool
}

// Unwrap lets http.ResponseController reach the connection (a stream takes it over) and
// its deadlines.
func (cw *compressWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }

func (cw *compressWriter) WriteHeader(code int) {
	if code < http.StatusOK { // 103 Early Hints and the like go out at once
		cw.ResponseWriter.WriteHeader(code)
		return
	}
	if cw.status != 0 {
		return
	}
	cw.status = code
	h := cw.Header()
	switch {
	case code == http.StatusNoContent || code == http.StatusNotModified || code == http.StatusPartialContent,
		h.Get("Content-Encoding") != "", !compressible(h.Get("Content-Type")):
		cw.send(false)
		return
	}
	varyAcceptEncoding(h)
	if !cw.gzip {
		cw.send(false)
		return
	}
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil {
		cw.send(n >= compressMinBytes)
	}
	// Unknown length: held until there is enough to tell.
}

func (cw *compressWriter) Write(p []byte) (int, error) {
	if cw.status == 0 {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.decided {
		if cw.gz != nil {
			return cw.gz.Write(p)
		}
		return cw.ResponseWriter.Write(p)
	}
	cw.held = append(cw.held, p...)
	if len(cw.held) >= compressMinBytes {
		if err := cw.send(true); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// send writes the header, compressed or not, and what was held.
func (cw *compressWriter) send(compress bool) error {
	cw.decided = true
	if compress {
		h := cw.Header()
		h.Del("Content-Length")
		h.Set("Content-Encoding", "gzip")
		if et := h.Get("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
			h.Set("ETag", "W/"+et) // not the bytes the tag names
		}
		cw.gz = gzipWriters.Get().(*gzip.Writer)
		cw.gz.Reset(cw.ResponseWriter)
	}
	cw.ResponseWriter.WriteHeader(cw.status)
	held := cw.held
	cw.held = nil
	if len(held) == 0 {
		return nil
	}
	var err error
	if cw.gz != nil {
		_, err = cw.gz.Write(held)
	} else {
		_, err = cw.ResponseWriter.Write(held)
	}
	return err
}

// FlushError sends what was written: a response flushed before it was long enough to
// compress goes out as it is.
func (cw *compressWriter) FlushError() error {
	if cw.status == 0 {
		cw.WriteHeader(http.StatusOK)
	}
	if !cw.decided {
		if err := cw.send(false); err != nil {
			return err
		}
	}
	if cw.gz != nil {
		if err := cw.gz.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(cw.ResponseWriter).Flush()
}

// Flush is FlushError for those that look for an http.Flusher.
func (cw *compressWriter) Flush() { _ = cw.FlushError() }

// Hijack hands the connection over; nothing more is written through the writer.
func (cw *compressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(cw.ResponseWriter).Hijack()
	if err == nil {
		cw.hijacked = true
	}
	return conn, rw, err
}

// close ends the response once the handler has returned.
func (cw *compressWriter) close() {
	switch {
	case cw.hijacked:
	case cw.status != 0 && !cw.decided:
		cw.send(false)
	case cw.gz != nil:
		cw.gz.Close()
		cw.gz.Reset(nil)
		gzipWriters.Put(cw.gz)
		cw.gz = nil
	}
}
