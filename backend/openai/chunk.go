package openai

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/parley-chat/parley/internal/wire"
)

// maxChunkBytes bounds one event of a streamed reply: a chunk carries a token or a piece of a
// tool call's arguments, and a server that sends a whole long reply in one chunk still fits.
const maxChunkBytes = 16 << 20

// delta is what Parley reads of one chat.completion.chunk: the first choice's text (content
// and refusal), pieces of its tool calls and its finish reason. Everything else (ids, model,
// usage, logprobs, reasoning_content, other choices) is checked for syntax and skipped.
type delta struct {
	text   string
	calls  []callPiece
	finish string
}

// callPiece is one streamed piece of a tool call.
type callPiece struct {
	index          int64
	id, name, args string
}

// streamError is an event whose JSON has an "error" member: the endpoint reports a failure
// in the middle of the stream (OpenAI, vLLM and llama.cpp all do it this way).
type streamError struct{ data []byte }

func (e *streamError) Error() string {
	return "the endpoint reported an error while streaming: " + string(e.data)
}

// chunkStream reads a streamed chat completion, chunk by chunk. It decodes what
// openai-go's stream of ChatCompletionChunk decodes (chunk_test.go holds it to that),
// field for field of what Parley reads, without building a chunk's structs per token.
type chunkStream struct {
	sse  *wire.Reader
	scan wire.Scanner
	d    delta
	done bool
	err  error
}

func newChunkStream(res *http.Response) *chunkStream {
	return &chunkStream{sse: wire.NewReader(res.Body, maxChunkBytes)}
}

// next reads the next chunk; false at the end of the stream ([DONE] or EOF) or on an error.
func (c *chunkStream) next() bool {
	if c.done || c.err != nil {
		return false
	}
	ev, err := c.sse.Next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			c.err = err
		}
		return false
	}
	if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
		c.done = true
		return false
	}
	c.d, c.err = c.decode(ev.Data)
	var syntax *wire.SyntaxError
	if ev.Cut && (errors.As(c.err, &syntax) || errors.Is(c.err, wire.ErrNotObject)) {
		// The connection closed in the middle of a chunk: the reply is cut off, which the
		// caller explains, rather than malformed.
		c.err = nil
		return false
	}
	return c.err == nil
}

// decode reads one chunk. A chunk with a non-null "error" member is a streamError; a chunk
// that is not JSON is a *wire.SyntaxError.
func (c *chunkStream) decode(data []byte) (delta, error) {
	var d delta
	failed := false
	s := &c.scan
	s.Reset(data)
	if s.Null() {
		return d, s.End() // an empty chunk, as openai-go reads it
	}
	if !s.IsObject() {
		if err := s.Skip(); err != nil {
			return d, err
		}
		return d, wire.ErrNotObject
	}
	err := s.Object(func(key []byte) error {
		switch string(key) {
		case "choices":
			return s.Array(func() error { return c.choice(&d) })
		case "error":
			failed = !s.Null()
		}
		return nil
	})
	if err == nil {
		err = s.End()
	}
	if err != nil {
		return d, err
	}
	if failed {
		return d, &streamError{data: bytes.Clone(data)}
	}
	return d, nil
}

// choice reads one element of choices into d when it is the first choice (index 0).
func (c *chunkStream) choice(d *delta) error {
	s := &c.scan
	var index int64
	var text, refusal, finish string
	var calls []callPiece
	err := s.Object(func(key []byte) error {
		switch string(key) {
		case "index":
			index = readIndex(s)
		case "finish_reason":
			finish, _ = s.String()
		case "delta":
			return s.Object(func(key []byte) error {
				switch string(key) {
				case "content":
					text, _ = s.String()
				case "refusal":
					refusal, _ = s.String()
				case "tool_calls":
					return s.Array(func() error {
						p, err := c.callPiece()
						if err == nil {
							calls = append(calls, p)
						}
						return err
					})
				}
				return nil
			})
		}
		return nil
	})
	if err != nil || index != 0 {
		return err
	}
	d.text += text + refusal
	d.calls = append(d.calls, calls...)
	if finish != "" {
		d.finish = finish
	}
	return nil
}

// callPiece reads one element of a delta's tool_calls.
func (c *chunkStream) callPiece() (callPiece, error) {
	s := &c.scan
	var p callPiece
	err := s.Object(func(key []byte) error {
		switch string(key) {
		case "index":
			p.index = readIndex(s)
		case "id":
			p.id, _ = s.String()
		case "function":
			return s.Object(func(key []byte) error {
				switch string(key) {
				case "name":
					p.name, _ = s.String()
				case "arguments":
					p.args, _ = s.String()
				}
				return nil
			})
		}
		return nil
	})
	return p, err
}

// readIndex reads a choice's or a tool call's index as openai-go reads it: an integer, a whole
// number written otherwise (1.0, 1e0), a number in a string, or null (0); -1, an index of nothing Parley reads, for
// anything else, so that a malformed index never passes for the first.
func readIndex(s *wire.Scanner) int64 {
	if s.Null() {
		return 0
	}
	raw, err := s.Raw()
	if err != nil || len(raw) == 0 {
		return -1
	}
	if raw[0] == '"' { // "1", as some servers write it
		raw = raw[1 : len(raw)-1]
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return -1
	}
	return int64(f)
}
