package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
)

// An unsettled step is one whose end could not be written (the disk was full): the ledger
// still has it running while nothing runs it. The runner keeps trying to write its end, and
// a Retry or a new message tries at once, so that the conversation ends failed (or done)
// with Retry working as soon as the database takes writes again, without a restart.
type unsettledStep struct {
	mu      sync.Mutex // one attempt at a time
	step    int64
	partial *domain.Event
	err     error
	settled bool
	tries   int
}

// keepPartialFor is how many attempts at a step's end keep the text it was cut off in; after
// them its end is written without it (what was saved of it stays), so that a reply too large
// for the room left does not keep the conversation running.
const keepPartialFor = 3

// settleFirst and settleAtMost bound the wait between attempts at an unsettled step's end.
const (
	settleFirst  = 100 * time.Millisecond
	settleAtMost = 5 * time.Second
)

// settleLater records a step whose end could not be written and keeps trying to write it,
// backing off, until it is written or the runner stops (the next start then recovers it).
func (r *Runner) settleLater(conversationID, stepID int64, partial *domain.Event, stepErr error) {
	u := &unsettledStep{step: stepID, partial: partial, err: stepErr}
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.unsettled[conversationID] = u
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(settleFirst)
		defer t.Stop()
		for wait := settleFirst; ; wait = min(2*wait, settleAtMost) {
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
			}
			if r.settle(r.ctx, conversationID, u) == nil {
				return
			}
			t.Reset(wait)
		}
	}()
}

// settleNow tries once to write the end of the conversation's unsettled step, if it has one.
// It reports whether it wrote it; an error is why it could not.
func (r *Runner) settleNow(ctx context.Context, conversationID int64) (bool, error) {
	r.mu.Lock()
	u := r.unsettled[conversationID]
	r.mu.Unlock()
	if u == nil {
		return false, nil
	}
	err := r.settle(ctx, conversationID, u)
	return err == nil, err
}

// settle writes the end of u, once; nil means it is written (now or before).
func (r *Runner) settle(ctx context.Context, conversationID int64, u *unsettledStep) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.settled {
		return nil
	}
	resume, err := r.ledger.FinishStep(context.WithoutCancel(ctx), u.step, u.partial, u.err)
	// Ended already, gone, or another instance's now (ErrFenced): nothing is left to write.
	if code := domain.ErrorCode(err); err != nil && code != domain.ECONFLICT && code != domain.ENOTFOUND && !errors.Is(err, domain.ErrFenced) {
		if u.tries++; u.tries == keepPartialFor && u.partial != nil {
			r.log.Warn("the text a step was cut off in cannot be saved: its end is written without it",
				"conversation", conversationID, "step", u.step, "bytes", len(u.partial.Text))
			u.partial = nil
		}
		return err
	}
	u.settled = true
	r.mu.Lock()
	if r.unsettled[conversationID] == u {
		delete(r.unsettled, conversationID)
	}
	r.mu.Unlock()
	r.log.Info("step ended after its database write failed", "conversation", conversationID, "step", u.step)
	if resume != 0 {
		r.dispatch(conversationID, resume)
	}
	return nil
}
