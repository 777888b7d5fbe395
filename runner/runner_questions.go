package runner

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Answer validates form against question q, as its caller read it, and stores the answer;
// invalid input returns FieldErrors and stores nothing. An answer to a question resolved
// meanwhile gives ErrResolved (the store resolves a question once). Files answer the
// question's file fields, by field name.
func (r *Runner) Answer(ctx context.Context, q domain.QuestionRecord, form url.Values, files map[string]domain.File, by domain.Actor) (domain.QuestionRecord, error) {
	questionID := q.ID
	if err := r.pendingFor(ctx, q, by); err != nil {
		return q, err
	}
	clean, answered := domain.AnswerForm(q.Question, form, files)
	values, ferrs := domain.Validate(q.Question, clean)
	if len(ferrs) > 0 {
		return q, ferrs
	}
	res := by.Resolution(questionID, domain.Answered)
	res.Values, res.Files = values, answered
	if len(q.Refused) > 0 {
		// The fields Parley would not show are declined: the agent is told which, and why.
		res.Reason = q.DeclineReason()
	}
	if q.Approvals > 1 && !rejects(q.Question, values) {
		step, err := r.ledger.Approve(ctx, res, q.Approvals)
		if err != nil {
			return q, err
		}
		r.resumed(ctx, q, step, nil)
		return q, nil
	}
	return q, r.resolve(ctx, q, res)
}

// Decline resolves a question as declined, with the person's optional reason (EINVALID,
// and the question as it stands, when the reason is too long or not text: see ReasonText).
func (r *Runner) Decline(ctx context.Context, q domain.QuestionRecord, reason string, by domain.Actor) (domain.QuestionRecord, error) {
	res := by.Resolution(q.ID, domain.Declined)
	res.Reason = strings.TrimSpace(domain.NormalizeNewlines(reason))
	err := r.pendingFor(ctx, q, by)
	if err == nil {
		err = domain.ReasonText.Check(res.Reason)
	}
	if err != nil {
		return q, err
	}
	return q, r.resolve(ctx, q, res)
}

// Cancel resolves a question as cancelled; only where the asking agent allows it.
func (r *Runner) Cancel(ctx context.Context, q domain.QuestionRecord, by domain.Actor) (domain.QuestionRecord, error) {
	if err := r.pendingFor(ctx, q, by); err != nil {
		return q, err
	}
	if !q.AllowCancel {
		return q, domain.Errorf(domain.EINVALID, "This agent does not allow cancelling here; decline instead.")
	}
	return q, r.resolve(ctx, q, by.Resolution(q.ID, domain.Cancelled))
}

// Withdraw resolves a question as cancelled whatever its agent allows: whoever asked for the
// work called it off (an A2A client's tasks/cancel). The run's other questions go with it.
func (r *Runner) Withdraw(ctx context.Context, questionID int64, by domain.Actor) (domain.QuestionRecord, error) {
	return r.close(ctx, questionID, by.Resolution(questionID, domain.Cancelled))
}

func (r *Runner) close(ctx context.Context, questionID int64, res domain.Resolution) (domain.QuestionRecord, error) {
	q, err := r.pending(ctx, questionID)
	if err != nil {
		return q, err
	}
	return q, r.resolve(ctx, q, res)
}

// expire closes a question as Expired by Parley, for the reason given; one resolved before
// (ECONFLICT) is no error.
func (r *Runner) expire(ctx context.Context, questionID int64, reason string) error {
	_, err := r.close(ctx, questionID, domain.Resolution{QuestionID: questionID, Outcome: domain.Expired, Reason: reason, By: "parley"})
	if domain.ErrorCode(err) == domain.ECONFLICT {
		return nil
	}
	return err
}

// pendingFor checks that question q, as its caller read it, still waits for by to resolve
// it: a routed one (a group's, an agent's approvers') not by the person on whose behalf it
// was asked, nor by anyone on another's behalf (see CheckAnswerer). Whoever called checked
// whom it is for; the store refuses it if it was resolved since.
func (r *Runner) pendingFor(ctx context.Context, q domain.QuestionRecord, by domain.Actor) error {
	if !q.Pending() {
		return domain.ErrResolved
	}
	if !q.Routed() {
		return nil
	}
	c, err := r.ledger.Conversation(ctx, q.ConversationID)
	if err != nil {
		return err
	}
	return domain.CheckAnswerer(q.Question, domain.User{ID: c.UserID, Name: c.Owner}, by)
}

// Question reads question id as it stands.
func (r *Runner) Question(ctx context.Context, id int64) (domain.QuestionRecord, error) {
	return r.ledger.Question(ctx, id)
}

// rejects reports whether the answer picks an option that refuses, on a Choice question:
// one such answer settles it, however many approvals it needs.
func rejects(q domain.Question, values map[string]any) bool {
	if !q.Choice || len(q.Fields) != 1 {
		return false
	}
	v, _ := values[q.Fields[0].Name].(string)
	for _, o := range q.Fields[0].Options {
		if o.Value == v {
			return o.Reject
		}
	}
	return false
}

// pending reads a question that still waits; one resolved before gives ECONFLICT (with
// the question as it stands).
func (r *Runner) pending(ctx context.Context, questionID int64) (domain.QuestionRecord, error) {
	q, err := r.ledger.Question(ctx, questionID)
	if err == nil && !q.Pending() {
		err = domain.ErrResolved
	}
	return q, err
}

func (r *Runner) resolve(ctx context.Context, q domain.QuestionRecord, res domain.Resolution) error {
	step, err := r.ledger.Resolve(ctx, res)
	if err != nil {
		return err
	}
	r.resumed(ctx, q, step, &res)
	return nil
}

// resumed tells the step that waits for a live question its resolution, and runs the
// resume step the ledger queued, if any. res is nil when the resolution is the ledger's own
// (the last of several approvals): it is read back then.
func (r *Runner) resumed(ctx context.Context, q domain.QuestionRecord, step int64, res *domain.Resolution) {
	if res == nil && q.Live {
		if got, err := r.ledger.Question(ctx, q.ID); err == nil && got.Resolution != nil {
			res = got.Resolution
		}
	}
	r.mu.Lock()
	if w, ok := r.waiters[q.ID]; ok && res != nil {
		res.At = r.now()
		w <- *res // buffered: the one resolution of the question
		delete(r.waiters, q.ID)
	}
	r.mu.Unlock()
	if step != 0 {
		r.dispatch(q.ConversationID, step)
	}
}

// expireLive expires the live questions a crash left: the connection they waited on is
// gone, and their runs were cut off (Retry asks again).
func (r *Runner) expireLive(ctx context.Context) error {
	live, err := r.ledger.LiveQuestions(ctx)
	if err != nil {
		return err
	}
	for _, id := range live {
		q, err := r.ledger.Question(ctx, id)
		if err != nil {
			return fmt.Errorf("expire question %d: %w", id, err)
		}
		if err := r.expire(ctx, id, q.StoppedWhileAsked()); err != nil {
			return fmt.Errorf("expire question %d: %w", id, err)
		}
	}
	return nil
}

// deadlines expires questions whose deadline has passed, sleeping until the next one.
func (r *Runner) deadlines() {
	defer r.wg.Done()
	bg := context.WithoutCancel(r.ctx)
	for {
		ids, err := r.ledger.DueQuestions(bg, r.now())
		if err != nil {
			r.log.Error("due questions", "error", err)
		}
		for _, id := range ids {
			if err := r.expire(bg, id, "No answer came before the deadline."); err != nil {
				r.log.Error("expire question", "question", id, "error", err)
			}
		}
		ids, err = r.ledger.DueEscalations(bg, r.now())
		if err != nil {
			r.log.Error("due escalations", "error", err)
		}
		for _, id := range ids {
			if err := r.ledger.Escalate(bg, id); err != nil {
				r.log.Error("escalate question", "question", id, "error", err)
				continue
			}
			if q, err := r.ledger.Question(bg, id); err == nil {
				r.watch.Address(q.ConversationID) // the pages of whom it now waits for too
			}
		}
		wait := time.Minute
		if next, err := r.ledger.NextDeadline(bg); err == nil && !next.IsZero() {
			wait = min(wait, max(next.Sub(r.now()), 10*time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-r.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

func (r *Runner) wakeDeadlines() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}
