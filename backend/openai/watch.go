package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// errStalled is the cause of a request cancelled because the endpoint sent nothing for too long.
var errStalled = errors.New("the model endpoint sent nothing for too long")

// maxErrorBody bounds how much of an error response is kept to explain it.
const maxErrorBody = 64 << 10

// watch wraps the sending of one request. It cancels the request when the endpoint
// sends nothing (no headers, no byte of the stream) for idle, and keeps the status, body
// and content type of the response, so that faults are explained from what the endpoint
// really sent whatever shape its error body has.
type watch struct {
	// first bounds the wait for the first byte of the reply (a model loading, a long prompt);
	// idle bounds every silence after it.
	first   time.Duration
	idle    time.Duration
	stalled atomic.Bool
	started atomic.Bool // a byte of the reply body arrived

	mu          sync.Mutex
	status      int
	contentType string
	body        []byte
}

// do sends req with next (the HTTP client's Do), watching the answer.
func (w *watch) do(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(w.first, func() {
		w.stalled.Store(true)
		cancel(errStalled)
	})
	res, err := next(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel(nil)
		if w.stalled.Load() {
			return nil, errStalled
		}
		return nil, err
	}
	w.mu.Lock()
	w.status, w.contentType = res.StatusCode, res.Header.Get("Content-Type")
	w.mu.Unlock()
	if res.StatusCode >= 400 {
		b, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		timer.Stop()
		cancel(nil)
		w.mu.Lock()
		w.body = b
		w.mu.Unlock()
		if rerr != nil && w.stalled.Load() {
			return nil, errStalled
		}
		res.Body = io.NopCloser(bytes.NewReader(b))
		return res, nil
	}
	timer.Reset(w.first)
	res.Body = &idleBody{rc: res.Body, w: w, timer: timer, cancel: cancel}
	return res, nil
}

// response returns what was kept of the response; status is 0 when none came.
func (w *watch) response() (status int, contentType string, body []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.contentType, w.body
}

// idleBody restarts the idle timer whenever bytes arrive, SSE comments included.
type idleBody struct {
	rc     io.ReadCloser
	w      *watch
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && !b.w.stalled.Load() {
		b.w.started.Store(true)
		b.timer.Reset(b.w.idle)
	}
	if err != nil && err != io.EOF && b.w.stalled.Load() {
		err = errStalled
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.cancel(nil)
	return b.rc.Close()
}
