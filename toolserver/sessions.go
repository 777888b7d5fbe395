package toolserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parley-chat/parley/internal/child"
)

// roundTripRevision is the first revision of MCP whose servers ask through the result of
// a call (SEP-2322) rather than with a request in the middle of it.
const roundTripRevision = "2026-07-28"

// DefaultIdleSession is how long a session started for a call is kept once no call uses it.
const DefaultIdleSession = 5 * time.Minute

// maxMaxSessions bounds max_sessions: each session of a local server is a process.
const maxMaxSessions = 256

// Why Parley lets a session go: no call used it for a while, or a call on it ended without
// its result, so that the server may still be at work on it and ask for it later; that
// question must not reach the next call on the session. Neither is a failure of the server.
var (
	errIdle    = errors.New("no call used the session for a while")
	errRetired = errors.New("a call on the session ended without its result")
)

// letGo reports whether the session ended because Parley let it go.
func (st *session) letGo() bool {
	return st.isBroken() && (errors.Is(st.brokenWhy, errIdle) || errors.Is(st.brokenWhy, errRetired))
}

// perCallLocked reports whether each call of the server needs a session of its own: a
// server of a revision before 2026-07-28 asks the person with a request in the middle of
// the call (elicitation/create), and that request does not say which call it is for. The
// session it comes on does, when only one call uses it.
func (s *server) perCallLocked(st *session) bool {
	return st.protocol == "" || st.protocol < roundTripRevision || s.askedLive
}

// lease gives a call the session to make it on: the one session of a server that serves
// every call there; otherwise a session no other call holds, started if every session is
// held and fewer than MaxSessions are, or else the first one freed. wait is told that the
// call waits for a session, once, and with "" when it has one. release gives it back;
// retire, when the call ended without its result, lets it go instead.
func (s *server) lease(ctx context.Context, wait func(string)) (st *session, release func(retire bool), err error) {
	waited := false
	defer func() {
		if waited && wait != nil && err == nil {
			wait("")
		}
	}()
	for {
		s.mu.Lock()
		main, err := s.currentLocked()
		if err != nil {
			s.mu.Unlock()
			return nil, nil, fmt.Errorf("%w (%s): %v", ErrUnavailable, s.cfg.Name, err)
		}
		if !s.perCallLocked(main) {
			s.mu.Unlock()
			return main, func(bool) {}, nil
		}
		if st := s.freeLocked(); st != nil {
			s.holdLocked(st)
			s.mu.Unlock()
			return st, func(retire bool) { s.release(st, retire) }, nil
		}
		if 1+len(s.extra)+s.starting < s.cfg.MaxSessions {
			s.starting++
			s.mu.Unlock()
			st, err := s.startExtra(ctx)
			if err != nil {
				return nil, nil, err
			}
			return st, func(retire bool) { s.release(st, retire) }, nil
		}
		freed := s.freed
		s.mu.Unlock()
		if !waited && wait != nil {
			wait(fmt.Sprintf("a free session of the tool server (all %d are in use)", s.cfg.MaxSessions))
		}
		waited = true
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
	}
}

// freeLocked returns a session no call holds, the one run keeps up first.
func (s *server) freeLocked() *session {
	for _, st := range append([]*session{s.state}, s.extra...) {
		if !st.busy && !st.isBroken() {
			return st
		}
	}
	return nil
}

func (s *server) holdLocked(st *session) {
	st.busy = true
	if st.idle != nil {
		st.idle.Stop()
		st.idle = nil
	}
}

// release gives a session back: the next waiting call takes it, and an extra session no
// call takes within idleAfter goes. A retired one goes at once (run starts the one it
// keeps up again).
func (s *server) release(st *session, retire bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.busy = false
	switch {
	case retire:
		st.markBroken(errRetired)
	case st != s.state && !st.isBroken():
		var t *time.Timer
		t = time.AfterFunc(s.idleAfter, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			// Under mu, and only if no call took it since: no lease takes it meanwhile.
			if st.idle == t && !st.busy {
				st.markBroken(errIdle)
			}
		})
		st.idle = t
	}
	s.signalLocked()
}

// signalLocked wakes the calls that wait for a session.
func (s *server) signalLocked() {
	close(s.freed)
	s.freed = make(chan struct{})
}

// startExtra starts a session for a call beyond those the server has (the caller counted
// it in starting), and returns it held; it lives until it idles, is retired, breaks, or the
// pool closes.
func (s *server) startExtra(ctx context.Context) (*session, error) {
	st, err := s.connect(ctx)
	if err == nil {
		err = s.keep(st)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting--
	s.signalLocked() // the count changed: a call that waits may start one now
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("could not start another session of the tool server for this call: %w", s.cfg.scrub(err))
	}
	s.log.Info("started another session of the tool server for a call", "protocol", st.protocol, "sessions", 1+len(s.extra))
	return st, nil
}

// keep adds an extra session, held for the call that started it, to the server's, and
// watches it until it ends.
func (s *server) keep(st *session) error {
	p := s.pool
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.closed {
		st.cs.Close()
		child.KillGroup(st.cmd)
		return errors.New("Parley is stopping")
	}
	s.mu.Lock()
	s.holdLocked(st)
	s.extra = append(s.extra, st)
	s.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		err := s.hold(p.ctx, st)
		s.mu.Lock()
		s.extra = slices.DeleteFunc(s.extra, func(x *session) bool { return x == st })
		if st.idle != nil {
			st.idle.Stop()
		}
		s.signalLocked()
		n := len(s.extra)
		s.mu.Unlock()
		if p.ctx.Err() == nil && !st.letGo() {
			s.log.Warn("a session of the tool server ended", "error", s.cfg.scrub(err), "sessions", n+1)
		}
	}()
	return nil
}
