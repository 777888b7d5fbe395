package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-chat/parley/domain"
)

// ErrTakenOver is why a step stops when another instance took its run over: this instance
// had failed to renew its lease (see Ledger.Renew), and the run is interrupted already.
var ErrTakenOver = errors.New("another instance took the run over")

// ErrLeaseLapsing is why a step stops when this instance's lease ran out without a renewal:
// another instance may take the run over, and the step must not go on (calling tools, say)
// beside the one that takes it up.
var ErrLeaseLapsing = errors.New("this instance's lease ran out: it could not renew it in time")

// renew keeps this instance's lease every so often, and, after each renewal, runs the work it
// takes over from instances gone: their queued steps here, and their interrupted runs of
// agents that reattach again (as Start does after a crash). The takeover runs beside the
// renewals, never in their way; and the running steps stop only once the lease has run out,
// not when a renewal is late.
func (r *Runner) renew(every time.Duration, registered time.Time) {
	defer r.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	bg := context.WithoutCancel(r.ctx)
	// The lease runs out at its end by this process's clock, whatever the renewals are doing
	// then: from the registration (a lease is three renewals long) until the first renewal.
	lapse := time.AfterFunc(time.Until(registered.Add(3*every)), func() {
		r.log.Error("stopping the running steps: this instance's lease ran out, and another instance may take them over")
		r.cancelRunning(ErrLeaseLapsing)
	})
	defer lapse.Stop()
	var lastRenewal time.Time
	var taking sync.WaitGroup
	defer taking.Wait()
	var takingOver atomic.Bool
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(bg, every)
		l, err := r.ledger.Renew(ctx)
		cancel()
		if err != nil {
			r.log.Error("renew the lease", "error", err)
			continue
		}
		lapse.Reset(time.Until(l.Until))
		if l.Lost {
			r.log.Error("this instance was taken for gone (it could not renew its lease in time): its running steps were interrupted by another; stopping them here")
			r.cancelRunning(ErrTakenOver)
		}
		// Others are judged only after renewals without a gap: after a stall of this
		// instance's own, everyone's lease looks run out for a round.
		steady := !lastRenewal.IsZero() && time.Since(lastRenewal) <= 2*every
		lastRenewal = time.Now()
		if steady && takingOver.CompareAndSwap(false, true) {
			taking.Add(1)
			go func() {
				defer taking.Done()
				defer takingOver.Store(false)
				took, err := r.ledger.TakeOver(bg)
				if err != nil {
					r.log.Error("take over the work of instances gone", "error", err)
					return
				}
				r.takeOver(bg, took)
			}()
		}
	}
}

// takeOver runs what a TakeOver took over.
func (r *Runner) takeOver(ctx context.Context, took domain.Takeover) {
	if len(took.Interrupted) > 0 {
		if err := r.expireLive(ctx); err != nil {
			r.log.Error("take over", "error", err)
		}
	}
	for _, q := range took.Queued {
		r.log.Info("took over a queued step", "conversation", q.ConversationID, "step", q.ID)
		r.dispatch(q.ConversationID, q.ID)
	}
	for _, id := range took.Interrupted {
		r.log.Info("took over an interrupted run", "conversation", id)
		c, err := r.ledger.Conversation(ctx, id)
		if err != nil {
			continue
		}
		if ra, ok := r.agents[c.Agent].(domain.Reattacher); ok && ra.Reattaches() {
			if err := r.Retry(ctx, id); err != nil {
				r.log.Error("reattach", "conversation", id, "agent", c.Agent, "error", err)
			}
		}
	}
}

// stopStep stops the conversation's running step with cause.
func (r *Runner) stopStep(conversationID int64, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.running[conversationID]; s != nil {
		s.cancel(cause)
	}
}

// cancelRunning stops every running step with cause.
func (r *Runner) cancelRunning(cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.running {
		s.cancel(cause)
	}
}

// liveDrafts writes the text another instance's steps are writing, as their drafts arrive,
// into the hub, for the streams that follow it here. A stream that began in the middle of a
// message gets its text so far from the drafts stored (see followedElsewhere).
func (r *Runner) liveDrafts(drafts []domain.Draft) {
	for _, d := range drafts {
		if !r.hub.Followed(d.ConversationID) {
			continue
		}
		w := r.hub.RunWriter(d.ConversationID, d.RunID, 0, d.MessageID, d.Author)
		if w.WriteAt(d.At, d.Text) {
			r.writtenElsewhere(d.ConversationID, d.MessageID)
		}
	}
}

// followedElsewhere is told of a conversation a stream began to follow here while nothing
// is written in it here: if another instance is writing a message in it, the text it has
// stored so far goes into the hub at once, not with the next batch of it (which a step
// waiting on its model may not write for a long time).
func (r *Runner) followedElsewhere(conversationID int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.writtenElsewhere(conversationID, "")
	}()
}

// writtenElsewhere writes into the hub the text of the message another instance is writing
// in the conversation, as its drafts stored hold it: message msg's only, when msg is not "".
func (r *Runner) writtenElsewhere(conversationID int64, msg string) {
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second) // a read: given up on Stop
	defer cancel()
	d, ok, err := r.ledger.WrittenElsewhere(ctx, conversationID)
	switch {
	case err != nil:
		if r.ctx.Err() == nil {
			r.log.Error("live text of another instance", "conversation", conversationID, "error", err)
		}
	case ok && (msg == "" || d.MessageID == msg) && r.hub.Followed(conversationID):
		// Followed still: a stream that went meanwhile leaves the hub nothing to hold.
		r.hub.RunWriter(conversationID, d.RunID, 0, d.MessageID, d.Author).WriteAt(0, d.Text)
	}
}
