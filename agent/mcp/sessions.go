package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// roundTripRevision is the first revision of MCP whose servers ask through the result of
// a call (SEP-2322) rather than with a request in the middle of it.
const roundTripRevision = "2026-07-28"

// DefaultIdleSession is how long a session started for a call is kept once no call uses it.
const DefaultIdleSession = 5 * time.Minute

// maxMaxSessions bounds max_sessions: each session of a local server is a process.
const maxMaxSessions = 256

// errIdle lets a session go that no call has used for a while.
var errIdle = errors.New("no call used the session for a while")

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
// call waits for a session, once, and with "" when it has one. release gives it back.
func (s *server) lease(ctx context.Context, wait func(string)) (st *session, release func(), err error) {
	waited := false
	defer func() {
		if waited && wait != nil {
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
			return main, func() {}, nil
		}
		if st := s.freeLocked(); st != nil {
			s.holdLocked(st)
			s.mu.Unlock()
			return st, func() { s.release(st) }, nil
		}
		if 1+len(s.extra)+s.starting < s.cfg.MaxSessions {
			s.starting++
			s.mu.Unlock()
			st, err := s.startExtra(ctx)
			s.mu.Lock()
			s.starting--
			if err != nil {
				s.signalLocked()
				s.mu.Unlock()
				return nil, nil, err
			}
			s.extra = append(s.extra, st)
			s.holdLocked(st)
			n := 1 + len(s.extra)
			s.mu.Unlock()
			s.log.Info("started another session of the tool server for a call", "protocol", st.protocol, "sessions", n)
			return st, func() { s.release(st) }, nil
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
// call takes within idleAfter goes.
func (s *server) release(st *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.busy = false
	if st != s.state {
		st.idle = time.AfterFunc(s.idleAfter, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !st.busy {
				st.markBroken(errIdle) // under mu: no lease takes it meanwhile
			}
		})
	}
	s.signalLocked()
}

// signalLocked wakes the calls that wait for a session.
func (s *server) signalLocked() {
	close(s.freed)
	s.freed = make(chan struct{})
}

// startExtra starts a session for a call beyond those the server has; it lives until it
// idles, breaks or the pool closes.
func (s *server) startExtra(ctx context.Context) (*session, error) {
	st, err := s.connect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("could not start another session of the tool server for this call: %w", s.cfg.scrub(err))
	}
	p := s.pool
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.closed {
		st.cs.Close()
		killGroup(st.cmd)
		return nil, fmt.Errorf("%w (%s): Parley is stopping", ErrUnavailable, s.cfg.Name)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		err := s.hold(p.ctx, st)
		s.mu.Lock()
		for i, x := range s.extra {
			if x == st {
				s.extra = append(s.extra[:i], s.extra[i+1:]...)
				break
			}
		}
		if st.idle != nil {
			st.idle.Stop()
		}
		s.signalLocked()
		n := len(s.extra)
		s.mu.Unlock()
		if p.ctx.Err() == nil && !errors.Is(st.brokenWhy, errIdle) {
			s.log.Warn("a session of the tool server ended", "error", s.cfg.scrub(err), "sessions", n+1)
		}
	}()
	return st, nil
}
