package a2av1

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxRequestBytes bounds one JSON-RPC request: a message with its files.
const maxRequestBytes = 64 << 20

// request is a JSON-RPC request as both versions send it.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  obj             `json:"params,omitempty"`
}

// Server puts a v1.0 front on next, a v0.3 JSON-RPC handler, at the same URL: a request with
// A2A-Version: 1.0, or a v1.0 method name, is translated both ways; any other goes to next as
// it is. Every stream loses the empty results a v0.3 handler may write when it ends.
func Server(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes))
		if err != nil {
			http.Error(w, "cannot read the request", http.StatusBadRequest)
			return
		}
		var req request
		if decode(body, &req) != nil || r.Method != http.MethodPost {
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
			return
		}
		version := strings.TrimSpace(r.Header.Get("A2A-Version"))
		v1 := version == Version || MethodV03(req.Method) != ""
		switch {
		case version != "" && version != Version && version != "0.3":
			writeError(w, req.ID, -32009, fmt.Sprintf("A2A version %s is not supported; this agent speaks 1.0 and 0.3.", version))
			return
		case !v1:
			r.Body = io.NopCloser(bytes.NewReader(body))
			if streaming(req.Method) {
				w = &rewriter{w: w, flusher: flusherOf(w), line: func(data obj) obj { return data }}
			}
			next.ServeHTTP(w, r)
			return
		}
		method := MethodV03(req.Method)
		if method == "" {
			writeError(w, req.ID, -32601, fmt.Sprintf("Method %q not found.", req.Method))
			return
		}
		inner, _ := json.Marshal(request{JSONRPC: "2.0", ID: req.ID, Method: method, Params: ParamsToV03(req.Method, req.Params)})
		r2 := r.Clone(r.Context())
		r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(inner)), int64(len(inner))
		translate := func(data obj) obj { return responseToV1(method, req.ID, data) }
		if streaming(method) {
			next.ServeHTTP(&rewriter{w: w, flusher: flusherOf(w), line: translate}, r2)
			return
		}
		rec := &recorder{header: http.Header{}}
		next.ServeHTTP(rec, r2)
		var resp obj
		if decode(rec.body.Bytes(), &resp) != nil {
			writeError(w, req.ID, -32603, "The agent's answer could not be read.")
			return
		}
		writeJSON(w, translate(resp))
	})
}

// responseToV1 translates one v0.3 JSON-RPC response, with the request's own id.
func responseToV1(method string, id json.RawMessage, resp obj) obj {
	out := obj{"jsonrpc": "2.0", "id": idOf(id)}
	if e, ok := resp["error"].(obj); ok {
		out["error"] = ErrorToV1(e)
	} else {
		out["result"] = ResultToV1(method, resp["result"])
	}
	return out
}

func writeError(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	writeJSON(w, obj{"jsonrpc": "2.0", "id": idOf(id), "error": ErrorToV1(obj{"code": code, "message": msg})})
}

// idOf is a request's id as its answer repeats it: exactly as sent, null when there was none.
func idOf(id json.RawMessage) any {
	if len(id) == 0 {
		return nil
	}
	return id
}

func writeJSON(w http.ResponseWriter, v obj) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// recorder keeps a whole response of a v0.3 handler.
type recorder struct {
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}

// rewriter passes an event stream through line by line, translating each event's data; an
// event whose data is an empty result is dropped.
type rewriter struct {
	w       http.ResponseWriter
	flusher http.Flusher
	line    func(obj) obj
	buf     []byte
}

func flusherOf(w http.ResponseWriter) http.Flusher {
	f, _ := w.(http.Flusher)
	return f
}

func (rw *rewriter) Header() http.Header         { return rw.w.Header() }
func (rw *rewriter) WriteHeader(status int)      { rw.w.WriteHeader(status) }
func (rw *rewriter) Unwrap() http.ResponseWriter { return rw.w }

func (rw *rewriter) Write(b []byte) (int, error) {
	rw.buf = append(rw.buf, b...)
	for {
		i := bytes.IndexByte(rw.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := rw.buf[:i+1]
		out, keep := rewriteLine(line, rw.line)
		rw.buf = rw.buf[i+1:]
		if !keep {
			continue
		}
		if _, err := rw.w.Write(out); err != nil {
			return len(b), err
		}
	}
}

// Flush implements http.Flusher: the stream's events go out as they come.
func (rw *rewriter) Flush() {
	if rw.flusher != nil {
		rw.flusher.Flush()
	}
}

// rewriteLine translates one line of an event stream: a data line's JSON through f, every
// other line as it is. keep is false for the data line of an empty result.
func rewriteLine(line []byte, f func(obj) obj) (out []byte, keep bool) {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return line, true
	}
	var data obj
	if decode(bytes.TrimSpace(rest), &data) != nil {
		return line, true
	}
	if _, isErr := data["error"]; !isErr && data["result"] == nil {
		return nil, false
	}
	b, err := json.Marshal(f(data))
	if err != nil {
		return line, true
	}
	return append(append([]byte("data: "), b...), '\n'), true
}

// RequestToV1 translates the body of a v0.3 JSON-RPC request to v1.0; method is the request's
// v1.0 method. A request without a v1.0 form is an error.
func RequestToV1(body []byte) (out []byte, method string, err error) {
	var req request
	if err := decode(body, &req); err != nil || MethodV1(req.Method) == "" {
		return nil, "", fmt.Errorf("a2a v1.0: the request %q has no v1.0 form", req.Method)
	}
	method = MethodV1(req.Method)
	out, err = json.Marshal(request{JSONRPC: "2.0", ID: req.ID, Method: method, Params: ParamsToV1(req.Method, req.Params)})
	return out, method, err
}

// ResponseToV03 translates one v1.0 JSON-RPC response to a v1.0 method, or the data of one
// event of its stream, to v0.3. What is not a JSON object is returned as it is, for the
// client to report.
func ResponseToV03(method string, data []byte) []byte {
	var o obj
	if decode(data, &o) != nil {
		return data
	}
	out, err := json.Marshal(responseToV03(method, o))
	if err != nil {
		return data
	}
	return out
}

// Transport lets a v0.3 JSON-RPC client that reads the HTTP answers itself (a2a-go's) talk to
// a v1.0 agent: it sends each request as v1.0, with A2A-Version: 1.0, and reads each answer
// back as v0.3, an event stream line by line. Parley's inbound server's tests talk to it
// so; Parley's A2A back end translates each request and event itself (RequestToV1,
// ResponseToV03), reading its streams once.
type Transport struct {
	// Next sends the requests; nil means http.DefaultTransport.
	Next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	out, method, err := RequestToV1(body)
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
	r2.Header.Set("A2A-Version", Version)
	r2.Header.Set("Content-Type", "application/json")
	resp, err := next.RoundTrip(r2)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	translate := func(data obj) obj { return responseToV03(method, data) }
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &lineReader{r: bufio.NewReaderSize(resp.Body, 64<<10), c: resp.Body, f: translate}
		return resp, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var data obj
	if decode(b, &data) == nil {
		data = translate(data)
		if streaming(method) {
			// An error before the first event comes as plain JSON: as an event for the client.
			sse, _ := json.Marshal(data)
			b = append(append([]byte("data: "), sse...), '\n', '\n')
			resp.Header.Set("Content-Type", "text/event-stream")
		} else {
			b, _ = json.Marshal(data)
		}
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// responseToV03 translates one v1.0 JSON-RPC response.
func responseToV03(method string, resp obj) obj {
	out := copyObj(resp)
	if e, ok := resp["error"].(obj); ok {
		out["error"] = ErrorToV03(e)
	} else if res, ok := resp["result"]; ok {
		out["result"] = ResultToV03(method, res)
	}
	return out
}

// lineReader translates an event stream as it is read.
type lineReader struct {
	r   *bufio.Reader
	c   io.Closer
	f   func(obj) obj
	out []byte
	err error
}

func (l *lineReader) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		line, err := l.r.ReadBytes('\n')
		l.err = err
		if len(line) > 0 {
			if out, keep := rewriteLine(line, l.f); keep {
				l.out = out
			}
		}
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

func (l *lineReader) Close() error { return l.c.Close() }
