package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"sync"

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

// watch records what one protocol call saw on the wire (the answer's status, content type
// and, for an error, the start of its body; the agent's JSON-RPC error; a stall; an event
// past the limit), so that a fault can say what happened.
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

// setRPCError records the first error object the agent answered with.
func (w *watch) setRPCError(e *rpcError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rpcErr == nil {
		w.rpcErr = e
	}
}

// tooLarge records an event of n bytes, past the limit, and returns errEventTooLarge.
func (w *watch) tooLarge(n int) error {
	w.mu.Lock()
	w.oversized = n
	w.mu.Unlock()
	return errEventTooLarge
}

type watchKey struct{}

// withWatch returns a context whose protocol calls are recorded on a new watch.
func withWatch(ctx context.Context) (context.Context, *watch) {
	w := &watch{}
	return context.WithValue(ctx, watchKey{}, w), w
}

// watchFrom returns the watch of a context, or a new one that nobody reads.
func watchFrom(ctx context.Context) *watch {
	if w, ok := ctx.Value(watchKey{}).(*watch); ok {
		return w
	}
	return &watch{}
}

// fit returns a response of at most limit bytes, or errEventTooLarge. One of up to limit+echo
// bytes fits once the history of its Task is dropped.
func fit(w *watch, data []byte, limit, echo int) ([]byte, error) {
	if len(data) > limit && len(data) <= limit+echo {
		data = dropHistory(data)
	}
	if len(data) > limit {
		return nil, w.tooLarge(len(data))
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
