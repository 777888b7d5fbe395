package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// dispatch runs a queued step of the conversation in its own goroutine. Once Stop has begun,
// the step stays queued in the ledger and runs after the next start. The step is registered
// at once, so that a stop right after a send finds it.
func (r *Runner) dispatch(conversationID, stepID int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	a := &activeStep{cancel: cancel, done: make(chan struct{})}
	r.running[conversationID] = a
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		resume := r.runStep(ctx, conversationID, stepID)
		r.mu.Lock()
		if r.running[conversationID] == a {
			delete(r.running, conversationID)
		}
		r.mu.Unlock()
		cancel(nil)
		close(a.done)
		if resume != 0 {
			r.dispatch(conversationID, resume)
		}
	}()
}

// runStep runs one step and ends it in the ledger; it returns the resume the ledger queued.
func (r *Runner) runStep(ctx context.Context, conversationID, stepID int64) (resume int64) {
	// Bookkeeping must finish even while shutting down or stopping.
	bg := context.WithoutCancel(ctx)
	conv, in, err := r.ledger.BeginStep(bg, stepID)
	if err != nil {
		r.log.Error("begin step", "step", stepID, "error", err)
		if domain.ErrorCode(err) == domain.EUNAVAILABLE {
			r.settleLater(conversationID, stepID, nil, err)
		}
		return 0
	}
	log := r.log.With("conversation", conv.ID, "step", stepID, "agent", conv.Agent)
	// From here on the step's writes carry it: they land only while it is this instance's.
	ctx, bg = domain.WithStep(ctx, stepID), domain.WithStep(bg, stepID)
	a, ok := r.agents[conv.Agent]
	var out *domain.StepOutput
	if !ok {
		err = fmt.Errorf("agent %q is not configured on this server", conv.Agent)
	} else if in.Trigger != domain.TriggerResume {
		// New work (a message, one queued before, a Retry) starts only while the owner may
		// use the agent; an answer's resume goes on.
		err = r.mayContinueIn(bg, conv)
	}
	if ok && err == nil {
		in.Person = conv.Owner
		sink := &stepSink{r: r, ctx: bg, in: in, agent: conv.Agent}
		out = domain.NewStepOutput(in, a.Info().Title, sink)
		out.Follow(a.Info())
		sink.out = out
		r.track(out, conv.ID)
		defer r.untrack(out)
		err = r.intake(ctx, conv, &in)
		if n := len(in.History); n > 0 {
			sink.after.Store(in.History[n-1].ID)
		}
		domain.FoldIntake(in.History)
		if err == nil {
			err = safeStep(ctx, a, in, out)
		}
		if err == nil {
			err = out.EndMessage()
		}
	}
	var partial *domain.Event
	if err != nil && out != nil {
		if p, ok := out.Partial(); ok {
			p.ConversationID, p.RunID = conv.ID, in.RunID
			partial = &p
		}
	}
	cause := context.Cause(ctx)
	switch {
	case err != nil && r.ctx.Err() != nil:
		// Cut off by shutdown: keep the partial text; a waiting run stays answerable.
		if ierr := r.ledger.InterruptStep(bg, stepID, partial); ierr != nil {
			log.Error("interrupt step", "error", ierr)
		}
		return 0
	case err != nil && errors.Is(cause, domain.ErrStopped):
		err = domain.ErrStopped
		if partial != nil {
			partial.Stopped = true
		}
	case err != nil && cause != nil && !errors.Is(cause, context.Canceled):
		err = cause
	case err != nil:
		log.Error("agent step failed", "error", err)
	}
	resume, ferr := r.ledger.FinishStep(bg, stepID, partial, err)
	if errors.Is(ferr, domain.ErrFenced) {
		log.Warn("the step's end was refused: another instance took its run over", "error", ferr)
		return 0
	}
	if ferr != nil {
		log.Error("finish step", "error", ferr)
		if domain.ErrorCode(ferr) == domain.EUNAVAILABLE {
			r.settleLater(conversationID, stepID, partial, err)
		}
	}
	return resume
}

// safeStep runs one step, turning a panic in the agent into an error.
func safeStep(ctx context.Context, a domain.Agent, in domain.StepInput, out domain.Output) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("agent crashed: %v", p)
		}
	}()
	return a.Step(ctx, in, out)
}
