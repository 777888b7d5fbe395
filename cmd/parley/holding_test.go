package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// holdingReceiver takes deliveries (a webhook's, a push service's) and holds each until
// released, so that Parley's stop or death finds one under way. A request whose sender goes
// before the release is not taken: the sender never heard back, and sends it again.
type holdingReceiver struct {
	*httptest.Server
	// Held gets a value for each request it holds.
	Held     chan struct{}
	release  chan struct{}
	inflight atomic.Int32
	mu       sync.Mutex
	taken    []string
}

// holdRequests starts a holding receiver; take says how a released request is answered and
// what of it to keep (an empty string keeps nothing).
func holdRequests(t *testing.T, take func(r *http.Request, body []byte) (status int, keep string)) *holdingReceiver {
	h := &holdingReceiver{Held: make(chan struct{}, 10), release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.inflight.Add(1)
		defer h.inflight.Add(-1)
		b, _ := io.ReadAll(r.Body) // read first: then the server sees a sender that goes
		select {
		case <-h.release:
		default:
			h.Held <- struct{}{}
			select {
			case <-h.release:
			case <-r.Context().Done():
				return
			}
		}
		status, keep := take(r, b)
		if keep != "" {
			h.mu.Lock()
			h.taken = append(h.taken, keep)
			h.mu.Unlock()
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(h.Close)
	return h
}

// Release answers the requests held, and every one after at once.
func (h *holdingReceiver) Release() { close(h.release) }

// InFlight is how many requests are being held or answered.
func (h *holdingReceiver) InFlight() int32 { return h.inflight.Load() }

// Taken is what was kept of the requests answered.
func (h *holdingReceiver) Taken() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.taken...)
}

// restartable is `parley serve` with the same arguments, started again after each stop; a
// failing test shows the last one's log.
type restartable struct {
	t     *testing.T
	token string
	args  []string
	L     *liveServer
	Logs  *syncBuffer
}

func newRestartable(t *testing.T, token string, args ...string) *restartable {
	r := &restartable{t: t, token: token, args: args}
	t.Cleanup(func() {
		if t.Failed() && r.Logs != nil {
			t.Logf("the last server's log:\n%s", r.Logs.String())
		}
	})
	return r
}

// Start starts the server (again).
func (r *restartable) Start() {
	r.Logs = &syncBuffer{}
	r.L = serveLive(r.t, r.token, r.Logs, r.args...)
}

// Kill ends the server with SIGKILL, as a crash would.
func (r *restartable) Kill() {
	r.L.cmd.Process.Kill()
	r.L.cmd.Wait()
}
