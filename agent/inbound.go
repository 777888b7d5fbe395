package agent

import (
	"context"
	"time"
)

// InboundAgent is the agent of the conversations that hold the questions of agents reaching
// Parley from outside (through its MCP server): one per person and client, "Questions from
// <client>". No agent runs in them: a question is the whole of its run's work, and the asker
// learns the outcome through its own call. Nobody writes messages into them.
const InboundAgent = "parley:mcp"

// InboundTitle is how pages name InboundAgent ("Questions from Claude Code, with agents
// over MCP").
const InboundTitle = "agents over MCP"

// InboundRequest is a question an agent outside Parley asks a person.
type InboundRequest struct {
	// UserID is the person asked, whose conversation holds the question.
	UserID int64
	// Client names the asking program ("Claude Code"): its conversation is the person's
	// conversation with that client.
	Client string
	// RequestID is the client's own id for the question, unique per person: asking again
	// with it returns the same question. Empty: every call asks anew.
	RequestID string
	// Digest stands for what was asked: a RequestID asked again must come with the same.
	Digest string
	// ToGroup is the group the question is for (its ID), 0 for the person asked: a group's
	// question is in every member's Inbox and not in the person's, unless they are a member.
	ToGroup int64
	// Via names the access token the client came with ("token laptop"), for the audit log.
	Via      string
	Question Question
}

// inboundNonce is the nonce that finds a person's conversation with a client.
func inboundNonce(client string) string { return InboundAgent + ":" + client }

// AskInbound stores an outside agent's question in the person's conversation with the
// client (created on the first question). created is false when req.RequestID found the
// question asked before.
func (r *Runner) AskInbound(ctx context.Context, req InboundRequest) (rec QuestionRecord, created bool, err error) {
	if err := req.Question.Check(); err != nil {
		return rec, false, Errorf(EINVALID, "%v", err)
	}
	conv, err := r.ledger.CreateConversation(ctx, req.UserID, InboundAgent, Title("Questions from "+req.Client), inboundNonce(req.Client))
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
func (r *Runner) AskedBefore(ctx context.Context, req InboundRequest) (rec QuestionRecord, found bool, err error) {
	if req.RequestID == "" {
		return rec, false, nil
	}
	rec, digest, err := r.ledger.InboundRequest(ctx, req.UserID, req.RequestID)
	switch {
	case ErrorCode(err) == ENOTFOUND:
		return rec, false, nil
	case err != nil:
		return rec, false, err
	case digest != req.Digest:
		return rec, false, ReusedRequestID(req.RequestID, rec.ID)
	}
	return rec, true, nil
}

// ReusedRequestID is the error of a request id given again with other arguments.
func ReusedRequestID(requestID string, questionID int64) error {
	return Errorf(EINVALID, "request_id %q was used for a different question (question %d): use a new request_id for a new question.", requestID, questionID)
}

// AwaitQuestion waits until the question is resolved, ctx ends or, when tick is set, every
// tick interval (it calls tick then), and returns the question as it stands: Pending when
// ctx ended first. It holds no more than a subscription to the owner's conversations.
func (r *Runner) AwaitQuestion(ctx context.Context, id int64, every time.Duration, tick func()) (QuestionRecord, error) {
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
