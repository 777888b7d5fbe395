package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/parley-chat/parley/internal/wire"
)

// skippedKindKey marks a part Parley could not read in its metadata; the value is its kind.
const skippedKindKey = "parley_skipped_kind"

// errEventTooLarge cuts a stream that sent a single event above the limit.
var errEventTooLarge = errors.New("event too large")

// rpcError is a JSON-RPC error object as the agent sent it. The SDK keeps only a generic
// error per code; this keeps the agent's own words for the person.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// watch records what one protocol call saw on the wire, so that a fault can say what
// happened, and holds the events too large for the SDK's SSE reader.
type watch struct {
	mu          sync.Mutex
	status      int
	contentType string
	body        []byte
	rpcErr      *rpcError
	stalled     bool
	oversized   int
}

func (w *watch) snapshot() (status int, contentType string, body []byte, rpcErr *rpcError, stalled bool, oversized int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.contentType, w.body, w.rpcErr, w.stalled, w.oversized
}

func (w *watch) setRPCError(raw json.RawMessage) {
	var e rpcError
	if json.Unmarshal(raw, &e) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rpcErr == nil {
		w.rpcErr = &e
	}
}

type watchKey struct{}

// withWatch returns a context whose protocol calls are recorded on a new watch.
func withWatch(ctx context.Context) (context.Context, *watch) {
	w := &watch{}
	return context.WithValue(ctx, watchKey{}, w), w
}

func watchFrom(ctx context.Context) *watch {
	w, _ := ctx.Value(watchKey{}).(*watch)
	return w
}

// tap sits under the JSON-RPC client (client.go). For each watched call it records status and
// errors, cuts streams that stall, refuses events above the size limit, rewrites the parts
// the SDK's types would fail on (unknown part kinds) in a form they read, and joins
// multi-line SSE data.
type tap struct {
	next     http.RoundTripper
	idle     time.Duration
	maxEvent int
	// echo is how much longer than maxEvent an event may arrive when it is a Task whose
	// history (which Parley never reads) holds the documents Parley sent.
	echo int
}

// RoundTrip implements http.RoundTripper.
func (t *tap) RoundTrip(req *http.Request) (*http.Response, error) {
	w := watchFrom(req.Context())
	if w == nil || req.Method != http.MethodPost {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	stream := req.Header.Get("Accept") == "text/event-stream"
	var timer *time.Timer
	if stream {
		timer = time.AfterFunc(t.idle, func() {
			w.mu.Lock()
			w.stalled = true
			w.mu.Unlock()
			cancel()
		})
	}
	stop := func() {
		if timer != nil {
			timer.Stop()
		}
		cancel()
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	w.mu.Lock()
	w.status, w.contentType = resp.StatusCode, ct
	w.mu.Unlock()
	if resp.StatusCode == http.StatusOK && isEventStream(ct) {
		resp.Body = &sseFilter{src: resp.Body, r: wire.NewReader(&activity{r: resp.Body, timer: timer, idle: t.idle}, t.maxEvent+t.echo), w: w, max: t.maxEvent, echo: t.echo, stop: stop}
		return resp, nil
	}
	// Anything else is read whole here (bounded), inspected, and served again.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxEvent+t.echo)+1))
	_ = resp.Body.Close()
	stop()
	if rerr != nil {
		return nil, rerr
	}
	if body, rerr = fit(w, body, t.maxEvent, t.echo); rerr != nil {
		return nil, rerr
	}
	if resp.StatusCode != http.StatusOK {
		w.mu.Lock()
		w.body = body[:min(len(body), 4096)]
		w.mu.Unlock()
	} else {
		body = filterResponse(w, body, false)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// activity resets the idle timer whenever bytes arrive.
type activity struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (a *activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 && a.timer != nil {
		a.timer.Reset(a.idle)
	}
	return n, err
}

// sseFilter re-emits an SSE stream one "data: <json>" event at a time, filtered.
type sseFilter struct {
	src  io.ReadCloser
	r    *wire.Reader
	w    *watch
	max  int
	echo int
	stop func()
	out  bytes.Buffer
	err  error
}

func (f *sseFilter) Read(p []byte) (int, error) {
	for f.out.Len() == 0 && f.err == nil {
		data, err := f.next()
		if len(data) > 0 {
			f.out.WriteString("data: ")
			f.out.Write(filterResponse(f.w, data, true))
			f.out.WriteString("\n\n")
		}
		f.err = err
	}
	if f.out.Len() > 0 {
		return f.out.Read(p)
	}
	return 0, f.err
}

// next reads one event's data (data lines joined).
func (f *sseFilter) next() ([]byte, error) {
	ev, err := f.r.Next()
	var tl *wire.TooLargeError
	if errors.As(err, &tl) {
		f.w.mu.Lock()
		f.w.oversized = tl.Size
		f.w.mu.Unlock()
		return nil, errEventTooLarge
	}
	if err != nil {
		return nil, err
	}
	return fit(f.w, ev.Data, f.max, f.echo)
}

func (f *sseFilter) Close() error {
	f.stop()
	return f.src.Close()
}

// fit returns a response of at most limit bytes, or errEventTooLarge. One of up to limit+echo
// bytes fits once the history of its Task is dropped.
func fit(w *watch, data []byte, limit, echo int) ([]byte, error) {
	if len(data) > limit && len(data) <= limit+echo {
		data = dropHistory(data)
	}
	if len(data) > limit {
		w.mu.Lock()
		w.oversized = len(data)
		w.mu.Unlock()
		return nil, errEventTooLarge
	}
	return data, nil
}

// dropHistory removes the history from a JSON-RPC response whose result is a Task: the
// messages of the task so far, which Parley never reads.
func dropHistory(data []byte) []byte {
	var resp map[string]json.RawMessage
	if json.Unmarshal(data, &resp) != nil {
		return data
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(resp["result"], &result) != nil {
		return data
	}
	if _, ok := result["history"]; !ok {
		return data
	}
	delete(result, "history")
	resp["result"] = mustMarshal(result)
	return mustMarshal(resp)
}

// filterResponse inspects one JSON-RPC response: it records an error object and rewrites parts
// the SDK cannot decode. Anything it cannot parse is passed on for the client to report.
func filterResponse(w *watch, data []byte, stream bool) []byte {
	resp, ok := wire.Members(data)
	if !ok {
		return data
	}
	if e, ok := resp["error"]; ok && string(e) != "null" {
		w.setRPCError(e)
		return data
	}
	result, ok := resp["result"]
	if !ok {
		return data
	}
	fixed, changed := sanitize(result)
	if !changed {
		if stream && bytes.ContainsAny(data, "\r\n") {
			return mustMarshal(resp) // a multi-line event on one line
		}
		return data
	}
	resp["result"] = fixed
	return mustMarshal(resp)
}

// sanitize replaces every part the SDK would refuse to decode (an unknown or missing kind,
// a file without content, data that is not an object) with an empty DataPart that names
// what was skipped, so that one odd part does not lose the whole event.
func sanitize(raw json.RawMessage) (json.RawMessage, bool) {
	if partsReadable(raw) {
		return raw, false // the usual case, read without building it
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw, false
	}
	if !fixParts(v) {
		return raw, false
	}
	return mustMarshal(v), true
}

// partsReadable reports whether every part in raw is one the SDK decodes, as fixPart
// judges them, reading raw once without building it and stopping at the first part it would
// rewrite.
func partsReadable(raw []byte) bool {
	var s wire.Scanner
	s.Reset(raw)
	errRewrite := errors.New("a part to rewrite")
	var value, part func() error
	value = func() error {
		switch {
		case s.IsObject():
			return s.Object(func(key []byte) error {
				if string(key) == "parts" && s.IsArray() {
					return s.Array(part)
				}
				return value()
			})
		case s.IsArray():
			return s.Array(value)
		}
		return s.Skip()
	}
	part = func() error {
		if !s.IsObject() {
			return errRewrite
		}
		var kind, uri, bytes string
		var text, data, file bool
		err := s.Object(func(key []byte) error {
			switch string(key) {
			case "kind":
				kind, _ = s.String()
			case "text":
				text = s.IsString()
			case "data":
				data = s.IsObject()
				return value()
			case "file":
				file, uri, bytes = s.IsObject(), "", ""
				return s.Object(func(key []byte) error {
					switch string(key) {
					case "uri":
						uri, _ = s.String()
					case "bytes":
						bytes, _ = s.String()
					default:
						return value()
					}
					return nil
				})
			default:
				return value()
			}
			return nil
		})
		if err != nil {
			return err
		}
		switch {
		case kind == "text" && text, kind == "data" && data, kind == "file" && file && (uri == "") != (bytes == ""):
			return nil
		}
		return errRewrite
	}
	return value() == nil && s.End() == nil
}

func fixParts(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if list, ok := child.([]any); ok && k == "parts" {
				for i, p := range list {
					if fixed, ok := fixPart(p); ok {
						list[i] = fixed
						changed = true
					}
				}
			}
			if fixParts(child) {
				changed = true
			}
		}
	case []any:
		for _, child := range x {
			if fixParts(child) {
				changed = true
			}
		}
	}
	return changed
}

// fixPart returns the replacement for a part the SDK cannot decode, and whether one is needed.
func fixPart(p any) (any, bool) {
	m, ok := p.(map[string]any)
	if !ok {
		return skipped("not an object"), true
	}
	kind, _ := m["kind"].(string)
	switch kind {
	case "text":
		if _, ok := m["text"].(string); ok {
			return nil, false
		}
	case "data":
		switch d := m["data"].(type) {
		case map[string]any:
			return nil, false
		case nil:
		default:
			m["data"] = map[string]any{"value": d}
			return m, true
		}
	case "file":
		if f, ok := m["file"].(map[string]any); ok {
			uri, _ := f["uri"].(string)
			b, _ := f["bytes"].(string)
			if (uri == "") != (b == "") {
				return nil, false
			}
		}
	}
	if kind == "" {
		kind = "(none)"
	}
	return skipped(kind), true
}

func skipped(kind string) map[string]any {
	return map[string]any{"kind": "data", "data": map[string]any{}, "metadata": map[string]any{skippedKindKey: kind}}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Values decoded from JSON always encode again.
		panic(err)
	}
	return b
}

// isEventStream reports whether a response's content type is text/event-stream.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}
