package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/parley-chat/parley/domain"
)

// stepSink is the runner's Sink for one step: text goes live through the hub and is stored
// by the flusher; events and questions go to the ledger at once.
type stepSink struct {
	r   *Runner
	ctx context.Context
	in  domain.StepInput
	// agent is the name of the agent that runs: its approval gates go to its approvers.
	agent string
	out   *domain.StepOutput
	w     *LiveWriter // the message being written
	// after is the last event committed before the message being written began: a stream
	// shows those events first (see Follower.CatchUp).
	after atomic.Int64
}

func (s *stepSink) Live(msgID, author, delta string) {
	if s.w == nil || s.w.Message() != msgID {
		s.w = s.r.hub.RunWriter(s.in.ConversationID, s.in.RunID, s.after.Load(), msgID, author)
	}
	s.w.Write(delta)
	if s.r.unflushed.Add(int64(len(delta))) >= s.r.flushBytes {
		select {
		case s.r.flushNow <- struct{}{}:
		default:
		}
	}
}

func (s *stepSink) Store(ev domain.Event) error {
	ev.ConversationID, ev.RunID = s.in.ConversationID, s.in.RunID
	stored, err := s.r.ledger.AppendEvent(s.ctx, ev)
	if err == nil && stored.ID > s.after.Load() {
		s.after.Store(stored.ID)
	}
	s.refused(err)
	return err
}

// refused stops the step when the ledger refused its write because another instance took
// its run over (domain.ErrFenced): nothing more it does may land.
func (s *stepSink) refused(err error) {
	if errors.Is(err, domain.ErrFenced) {
		s.r.log.Warn("a write of the step was refused: another instance took its run over; stopping it",
			"conversation", s.in.ConversationID, "step", s.in.StepID)
		s.r.stopStep(s.in.ConversationID, ErrTakenOver)
	}
}

func (s *stepSink) Ask(q domain.Question) (int64, error) {
	q = s.r.Policy(s.agent).Route(q, s.r.now())
	rec, err := s.r.ledger.AskQuestion(s.ctx, s.in.RunID, q)
	if err != nil {
		s.refused(err)
		return 0, err
	}
	if !q.Deadline.IsZero() || q.Escalate != nil {
		s.r.wakeDeadlines()
	}
	if rec.Resolution == nil && s.r.notify != nil {
		s.r.notify() // word of it to the channels of whom it is for
	}
	return rec.ID, nil
}

// Await waits for the resolution of a live question of the step. When ctx ends first (a
// stop, a shutdown), the question expires: nothing waits for its answer any more.
func (s *stepSink) Await(ctx context.Context, id int64) (domain.Resolution, error) {
	r := s.r
	w := make(chan domain.Resolution, 1)
	r.mu.Lock()
	r.waiters[id] = w
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiters, id)
		r.mu.Unlock()
	}()
	// It may have been resolved before the waiter was there.
	q, err := r.ledger.Question(s.ctx, id)
	if err != nil {
		return domain.Resolution{}, err
	} else if q.Resolution != nil {
		return *q.Resolution, nil
	}
	select {
	case res := <-w:
		return res, nil
	case <-ctx.Done():
	}
	reason := q.SessionEnded()
	switch {
	case r.ctx.Err() != nil:
		reason = q.StoppedWhileAsked()
	case errors.Is(context.Cause(ctx), domain.ErrStopped):
		reason = "The run was stopped."
	}
	if err := r.expire(s.ctx, id, reason); err != nil {
		return domain.Resolution{}, err
	}
	if q, err := r.ledger.Question(s.ctx, id); err == nil && q.Resolution != nil && q.Resolution.Outcome != domain.Expired {
		return *q.Resolution, nil // answered just before the end
	}
	return domain.Resolution{}, ctx.Err()
}

// track makes a running step's output known to the flusher; untrack forgets it.
func (r *Runner) track(out *domain.StepOutput, conversationID int64) {
	r.mu.Lock()
	r.outputs[out] = conversationID
	r.mu.Unlock()
}

func (r *Runner) untrack(out *domain.StepOutput) {
	r.mu.Lock()
	delete(r.outputs, out)
	r.mu.Unlock()
}

// flusher stores the text of messages being written every flushEvery, or sooner when
// flushBytes are waiting: one transaction for all conversations. A crash loses at most
// what was written since the last flush; the message is then marked interrupted.
func (r *Runner) flusher() {
	defer r.wg.Done()
	t := time.NewTicker(r.flushEvery)
	defer t.Stop()
	var drafts []domain.Draft
	failing := false // saving failed last time: the failure is logged once, not each flush
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		case <-r.flushNow:
		}
		drafts = r.collectDrafts(drafts[:0])
		if len(drafts) == 0 {
			continue
		}
		err := r.ledger.SaveDrafts(context.WithoutCancel(r.ctx), drafts)
		switch {
		case err != nil && !failing:
			r.log.Error("save drafts (logged again once they are saved)", "drafts", len(drafts), "error", err)
		case err == nil && failing:
			r.log.Info("drafts saved again", "drafts", len(drafts))
		}
		failing = err != nil
	}
}

// collectDrafts takes the unsaved text of every running step.
func (r *Runner) collectDrafts(drafts []domain.Draft) []domain.Draft {
	r.unflushed.Store(0)
	r.mu.Lock()
	defer r.mu.Unlock()
	for out, conv := range r.outputs {
		if d, ok := out.Draft(); ok {
			d.ConversationID, d.RunID = conv, out.RunID()
			drafts = append(drafts, d)
		}
	}
	return drafts
}
