package web

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
	"golang.org/x/sync/errgroup"
)

// sweepEvery is how often the open streams' people are looked at again when nothing on this
// server said so: the longest a stream outlives a session ended by another process.
const sweepEvery = time.Second

// openStreams are the server's open SSE streams, each with the check that the person behind
// it may still follow it. A sweep runs the checks: all of them when the database's count of
// auth changes has moved (a session ended, a password or a role changed, a token or an A2A
// client revoked, here or by `parley user`, `parley token` or `parley a2a-client`), and each at its own due time (when its session
// would end unused). A change made on this server runs the sweep at once; one made elsewhere
// is seen within sweepEvery.
type openStreams struct {
	mu   sync.Mutex
	next int
	open map[int]*openStream
	kick chan struct{}
	// epoch moves with every change of access heard of: a stream checks its person again
	// before it sends anything more once it moved (see accessGate), whether or not the sweep
	// got to it yet.
	epoch atomic.Uint64
}

// accessGate is a stream's own check of its person, run before it sends anything more
// whenever access changed since its last check: so that a stream whose access went gets no
// event committed after the change, even before the sweep ends it.
type accessGate struct {
	live  *openStreams
	seen  uint64
	check func(context.Context) (time.Time, bool)
}

// errAccessChanged ends a stream whose person may no longer follow it, from the middle of
// what it was sending.
var errAccessChanged = errors.New("access changed")

// pass is open as an error.
func (g *accessGate) pass(ctx context.Context) error {
	if g == nil || g.open(ctx) {
		return nil
	}
	return errAccessChanged
}

// gated hands a catch-up's events and text to a stream's reader only while its person may
// follow it: each thing a stream sends passes the gate first.
type gated struct {
	ctx  context.Context
	gate *accessGate
	r    runner.Reader
}

func (g gated) Event(ev domain.Event) error {
	if err := g.gate.pass(g.ctx); err != nil {
		return err
	}
	return g.r.Event(ev)
}

func (g gated) Live(m runner.LiveText) error {
	if err := g.gate.pass(g.ctx); err != nil {
		return err
	}
	return g.r.Live(m)
}

// open reports whether the stream may go on sending.
func (g *accessGate) open(ctx context.Context) bool {
	e := g.live.epoch.Load()
	if e == g.seen {
		return true
	}
	if _, ok := g.check(ctx); !ok {
		return false
	}
	g.seen = e
	return true
}

type openStream struct {
	// check reports whether the stream may go on and, if its session ends by itself, when to
	// check again.
	check  func(context.Context) (due time.Time, ok bool)
	due    time.Time
	cancel context.CancelFunc
}

// add registers a stream; the returned function unregisters it.
func (o *openStreams) add(st *openStream) (remove func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open == nil {
		o.open = map[int]*openStream{}
	}
	o.next++
	n := o.next
	o.open[n] = st
	return func() {
		o.mu.Lock()
		delete(o.open, n)
		o.mu.Unlock()
	}
}

// changed runs the sweep now: someone's access just changed on this server.
func (o *openStreams) changed() {
	o.epoch.Add(1)
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// Watch registers a stream whose person must still pass check, then checks once: a change
// between the request's own check and the registration would otherwise go unseen. It
// reports whether the stream may start; remove unregisters it. An A2A server registers its
// open requests with it (a2aserver.Options.Watch), so that a revoked client's end too.
//
// open is the stream's own check, to ask before each thing it sends: when access changed
// anywhere since its last check, it runs check at once (the sweep may not have come round).
func (s *Server) Watch(ctx context.Context, cancel context.CancelFunc, check func(context.Context) (time.Time, bool)) (remove func(), open func(context.Context) bool, ok bool) {
	remove, gate, ok := s.watch(ctx, cancel, check)
	return remove, gate.open, ok
}

// watch is Watch, and the stream's gate: what it asks before each thing it sends.
func (s *Server) watch(ctx context.Context, cancel context.CancelFunc, check func(context.Context) (time.Time, bool)) (remove func(), gate *accessGate, ok bool) {
	st := &openStream{check: check, cancel: cancel}
	remove = s.live.add(st)
	gate = &accessGate{live: &s.live, seen: s.live.epoch.Load(), check: check}
	due, ok := check(ctx)
	s.live.mu.Lock()
	st.due = due
	s.live.mu.Unlock()
	return remove, gate, ok
}

// CheckStreams has every open stream checked again, ending those whose person may no longer
// follow them: for a change of access made in another instance or by a command, which the
// store hears of before any event committed after it (store.DB.OnAuthChange). It returns at
// once (the store may call it holding its writer): each stream checks itself before it sends
// anything more (accessGate), and the sweep ends the quiet ones.
func (s *Server) CheckStreams() { s.live.changed() }

// sweepStreams checks the open streams until the server closes.
func (s *Server) sweepStreams() {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	seen, _ := s.accounts.AuthChanges(s.closed)
	for {
		all := false
		select {
		case <-s.closed.Done():
			return
		case <-s.live.kick:
			all = true
		case <-t.C:
		}
		if n, err := s.accounts.AuthChanges(s.closed); err == nil && n != seen {
			seen, all = n, true
			s.live.epoch.Add(1)
		}
		s.live.sweep(s.closed, s.now(), all)
	}
}

// sweep runs the checks that are due (all of them with all), ending the streams that may not
// go on. The checks run outside the lock: they read the database.
func (o *openStreams) sweep(ctx context.Context, now time.Time, all bool) {
	o.mu.Lock()
	var due []*openStream
	for _, st := range o.open {
		if all || !st.due.IsZero() && !now.Before(st.due) {
			due = append(due, st)
		}
	}
	o.mu.Unlock()
	// Each check reads the database: several at once, so that a change of access that
	// concerns thousands of streams ends them in the time of a few reads, not of all in a row.
	var g errgroup.Group
	g.SetLimit(sweepAtOnce)
	for _, st := range due {
		g.Go(func() error {
			next, ok := st.check(ctx)
			if !ok {
				st.cancel()
				return nil
			}
			o.mu.Lock()
			st.due = next
			o.mu.Unlock()
			return nil
		})
	}
	g.Wait()
}

// sweepAtOnce is how many streams a sweep checks at once.
const sweepAtOnce = 8
