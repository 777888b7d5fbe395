package runner

import (
	"context"
	"time"

	"github.com/parley-chat/parley/domain"
)

// inboundNonce is the nonce that finds a person's conversation with a client.
// It was the made-up agent name of those conversations, and stays so that the conversations
// made then are found.
func inboundNonce(client string) string { return "parley:mcp:" + client }

// AskInbound stores an outside agent's question in the person's conversation with the
// client (created on the first question). created is false when req.RequestID found the
// question asked before.
func (r *Runner) AskInbound(ctx context.Context, req domain.InboundRequest) (rec domain.QuestionRecord, created bool, err error) {
	if err := req.Question.Check(); err != nil {
		return rec, false, domain.Errorf(domain.EINVALID, "%v", err)
	}
	conv, err := r.ledger.CreateInboundConversation(ctx, req.UserID, domain.Title("Questions from "+req.Client), inboundNonce(req.Client))
	if err != nil {
		return rec, false, err
	}
	rec, created, err = r.ledger.AskInbound(ctx, conv.ID, req)
	if err == nil && created && (!rec.Deadline.IsZero() || rec.Escalate != nil) {
		r.wakeDeadlines()
	}
	return rec, created, err
}

// AskedBefore returns the question req.RequestID asked before, found false when it asked
// none; EINVALID when it asked something else (another digest). A client that calls again
// to wait gets its question so, whatever changed since (a group deleted, say).
func (r *Runner) AskedBefore(ctx context.Context, req domain.InboundRequest) (rec domain.QuestionRecord, found bool, err error) {
	if req.RequestID == "" {
		return rec, false, nil
	}
	rec, digest, err := r.ledger.InboundRequest(ctx, req.UserID, req.RequestID)
	switch {
	case domain.ErrorCode(err) == domain.ENOTFOUND:
		return rec, false, nil
	case err != nil:
		return rec, false, err
	case digest != req.Digest:
		return rec, false, domain.ReusedRequestID(req.RequestID, rec.ID)
	}
	return rec, true, nil
}

// AwaitQuestion waits until the question is resolved, ctx ends or, when tick is set, every
// tick interval (it calls tick then), and returns the question as it stands: Pending when
// ctx ended first. It holds no more than a subscription to the owner's conversations.
func (r *Runner) AwaitQuestion(ctx context.Context, id int64, every time.Duration, tick func()) (domain.QuestionRecord, error) {
	q, err := r.ledger.Question(ctx, id)
	if err != nil || !q.Pending() {
		return q, err
	}
	conv, err := r.ledger.Conversation(ctx, q.ConversationID)
	if err != nil {
		return q, err
	}
	w := r.watch.Subscribe(conv.UserID)
	defer w.Close()
	var ticks <-chan time.Time
	if tick != nil && every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		ticks = t.C
	}
	for {
		// Read again after subscribing, so that a resolution just before is not missed.
		if q, err = r.ledger.Question(context.WithoutCancel(ctx), id); err != nil || !q.Pending() {
			return q, err
		}
		select {
		case <-ctx.Done():
			return q, nil
		case <-ticks:
			tick()
		case <-w.C:
		}
	}
}
