package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-chat/parley/domain"
)

// AskQuestion stores a pending question in the same transaction as its question_asked event.
// A question whose fields were all refused (secrets) is declined at once, with the reason.
func (db *DB) AskQuestion(ctx context.Context, runID int64, q domain.Question) (domain.QuestionRecord, error) {
	var rec domain.QuestionRecord
	err := db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.lockRun(ctx, runID); err != nil {
			return fmt.Errorf("ask: %w", err)
		}
		var convID, ownerID int64
		if err := tx.QueryRowContext(ctx, `SELECT r.conversation_id, coalesce(c.user_id, 0) FROM runs r JOIN conversations c ON c.id = r.conversation_id WHERE r.id = ?`, runID).
			Scan(&convID, &ownerID); err != nil {
			return fmt.Errorf("ask: run %d: %w", runID, err)
		}
		if q.Routed() {
			var err error
			rec, err = db.askRouted(ctx, tx, convID, runID, q)
			return err
		}
		var err error
		if rec, err = db.ask(ctx, tx, convID, runID, q); err != nil || rec.Resolution != nil {
			return err // declined at once: nobody is asked
		}
		// Word of it to the owner's channels.
		return db.notify(ctx, tx, rec.ID, "asked", ownerID, 0)
	})
	return rec, err
}

// AskInbound stores a question an agent outside Parley asks (see domain.InboundRequest) in
// the conversation given: it joins the conversation's waiting run, or starts one that waits.
// A request id the person used before returns that question, and created false; used for
// other arguments (another digest), it gives EINVALID.
func (db *DB) AskInbound(ctx context.Context, convID int64, req domain.InboundRequest) (rec domain.QuestionRecord, created bool, err error) {
	err = db.tx(ctx, func(tx *Tx) error {
		rec, created = domain.QuestionRecord{}, false // (a transaction run again starts afresh)
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		if req.RequestID != "" {
			var digest string
			var id int64
			err := tx.QueryRowContext(ctx, `SELECT digest, question_id FROM inbound_requests WHERE user_id = ? AND request_id = ?`, req.UserID, req.RequestID).Scan(&digest, &id)
			switch {
			case err == nil && digest != req.Digest:
				return domain.ReusedRequestID(req.RequestID, id)
			case err == nil:
				rec.ID = id
				return nil
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("ask inbound: %w", err)
			}
		}
		runID, state, err := currentRun(ctx, tx, convID)
		if err != nil {
			return fmt.Errorf("ask inbound: %w", err)
		}
		if !domain.InboundJoins(state) {
			now := formatTime(db.Now())
			if runID, err = insertID(ctx, tx, `INSERT INTO runs (conversation_id, state, created_at, updated_at) VALUES (?, ?, ?, ?)`, convID, domain.RunStartsWithQuestion, now, now); err != nil {
				return fmt.Errorf("ask inbound: %w", err)
			}
			if err := db.setRunState(ctx, tx, convID, runID, domain.RunStartsWithQuestion, ""); err != nil {
				return err
			}
		}
		if rec, err = db.ask(ctx, tx, convID, runID, req.Question); err != nil {
			return err
		}
		created = true
		if req.ToGroup != 0 {
			err = db.route(ctx, tx, rec.ID, req.ToGroup, 0, true, req.Question.Escalate)
		} else {
			err = db.route(ctx, tx, rec.ID, 0, req.UserID, false, req.Question.Escalate)
		}
		if err != nil {
			return err
		}
		var person string
		if err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE id = ?`, req.UserID).Scan(&person); err != nil {
			return fmt.Errorf("ask inbound: user %d: %w", req.UserID, err)
		}
		if err := db.audit(ctx, tx, person, "ask over mcp", convID, fmt.Sprintf("question %d from %s with %s", rec.ID, req.Question.Asker, req.Via)); err != nil {
			return err
		}
		if rec.Resolution != nil { // declined at once: the run may have nothing left to wait for
			var pending int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM questions WHERE run_id = ? AND state = 'pending'`, runID).Scan(&pending); err != nil {
				return fmt.Errorf("ask inbound: %w", err)
			}
			// The run waits (joined or just started), and no step runs in an inbound conversation.
			f := domain.ResolveFacts{State: domain.StateWaiting, Pending: pending, Inbound: true}
			if _, err := db.changeRun(ctx, tx, convID, runID, domain.AfterResolve(f)); err != nil {
				return err
			}
		}
		if req.RequestID == "" {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO inbound_requests (user_id, request_id, digest, question_id) VALUES (?, ?, ?, ?)`,
			req.UserID, req.RequestID, req.Digest, rec.ID); err != nil {
			return fmt.Errorf("ask inbound: %w", err)
		}
		return nil
	})
	if err == nil && !created {
		rec, err = db.Question(ctx, rec.ID)
	}
	return rec, created, err
}

// route sends a question just stored to whom it asks: word of it to the channels of the
// group or the person, the time it escalates, and, when it is theirs rather than its
// conversation owner's (audience), its place in their Inbox.
func (db *DB) route(ctx context.Context, tx *Tx, questionID, groupID, userID int64, audience bool, e *domain.Escalation) error {
	if audience {
		if _, err := tx.ExecContext(ctx, `INSERT INTO question_audience (question_id, group_id, user_id, added_at) VALUES (?, ?, ?, ?)`,
			questionID, nullID(groupID), nullID(userID), formatTime(db.Now())); err != nil {
			return fmt.Errorf("ask: %w", err)
		}
	}
	if err := db.notify(ctx, tx, questionID, "asked", userID, groupID); err != nil {
		return err
	}
	if e != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE questions SET escalate_at = ? WHERE id = ?`, formatTime(db.Now().Add(e.After)), questionID); err != nil {
			return fmt.Errorf("ask: %w", err)
		}
	}
	return nil
}

// ask stores a question of the run with its event (see AskQuestion).
func (db *DB) ask(ctx context.Context, tx *Tx, convID, runID int64, q domain.Question) (domain.QuestionRecord, error) {
	var deadline any
	if !q.Deadline.IsZero() {
		deadline = formatTime(q.Deadline)
	}
	now := db.Now()
	// The event id is not known yet: insert the question first, then the event, then link them.
	id, err := insertID(ctx, tx, `INSERT INTO questions (conversation_id, run_id, event_id, asker, spec, live, deadline, created_at)
		VALUES (?, ?, NULL, ?, '{}', ?, ?, ?)`, convID, runID, q.Asker, flag(q.Live), deadline, formatTime(now))
	if err != nil {
		return domain.QuestionRecord{}, fmt.Errorf("ask: %w", err)
	}
	q.ID = id
	spec, err := json.Marshal(q)
	if err != nil {
		return domain.QuestionRecord{}, fmt.Errorf("ask: %w", err)
	}
	ev, err := db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, RunID: runID, Kind: domain.EventQuestionAsked, Question: &q})
	if err != nil {
		return domain.QuestionRecord{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE questions SET event_id = ?, spec = ? WHERE id = ?`, ev.ID, spec, q.ID); err != nil {
		return domain.QuestionRecord{}, fmt.Errorf("ask: %w", err)
	}
	rec := domain.QuestionRecord{Question: q, ConversationID: convID, RunID: runID, AskedAt: now}
	if r, ok := domain.DeclineAtOnce(q); ok {
		if err := db.resolve(ctx, tx, convID, runID, r); err != nil {
			return rec, err
		}
		r.At = db.Now()
		rec.Resolution = &r
	}
	return rec, nil
}

// Question returns one stored question with its resolution, or an ENOTFOUND error.
func (db *DB) Question(ctx context.Context, id int64) (domain.QuestionRecord, error) {
	var rec domain.QuestionRecord
	var spec, created string
	var live int
	// The answer, if any, in the same statement (answers has at most one row a question).
	var r domain.Resolution
	var answered bool
	var vals, at string
	err := db.read.QueryRowContext(ctx, `SELECT q.conversation_id, q.run_id, q.spec, q.live, q.created_at, a.id IS NOT NULL,
			coalesce(a.outcome, ''), coalesce(a.vals, ''), coalesce(a.reason, ''), coalesce(a.answered_by, ''),
			coalesce(a.on_behalf_of, ''), coalesce(a.via, ''), coalesce(a.created_at, '')
		FROM questions q LEFT JOIN answers a ON a.question_id = q.id WHERE q.id = ?`, id).
		Scan(&rec.ConversationID, &rec.RunID, &spec, &live, &created, &answered,
			&r.Outcome, &vals, &r.Reason, &r.By, &r.OnBehalfOf, &r.Via, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, domain.QuestionNotFound(id)
	}
	if err != nil {
		return rec, fmt.Errorf("question %d: %w", id, err)
	}
	if err := json.Unmarshal([]byte(spec), &rec.Question); err != nil {
		return rec, fmt.Errorf("question %d: %w", id, err)
	}
	rec.AskedAt, rec.Live = parseTime(created), live == 1
	if rec.Approvals > 1 {
		if rec.Approved, err = db.approvals(ctx, id); err != nil {
			return rec, err
		}
	}
	if !answered {
		return rec, nil
	}
	if err := json.Unmarshal([]byte(vals), &r.Values); err != nil {
		return rec, fmt.Errorf("question %d answer: %w", id, err)
	}
	r.QuestionID, r.At = id, parseTime(at)
	rec.Resolution = &r
	return rec, nil
}

// Resolve stores a resolution and, when it was the run's last pending question and the agent
// is not running, queues the resume. A question resolved before gives an ECONFLICT error.
func (db *DB) Resolve(ctx context.Context, r domain.Resolution) (int64, error) {
	var resume int64
	err := db.tx(ctx, func(tx *Tx) (err error) {
		resume, err = db.resolveAndResume(ctx, tx, r)
		return err
	})
	return resume, err
}

// resolveAndResume is Resolve in the caller's transaction.
func (db *DB) resolveAndResume(ctx context.Context, tx *Tx, r domain.Resolution) (int64, error) {
	// Exactly once: under the conversation's lock, a question resolved meanwhile is seen so.
	convID, runID, state, err := tx.lockQuestion(ctx, r.QuestionID)
	if err != nil {
		return 0, err
	}
	if state != "pending" {
		return 0, domain.ErrResolved
	}
	if err := db.resolve(ctx, tx, convID, runID, r); err != nil {
		return 0, err
	}
	// Cancel takes the run's other questions along, not a live one (see domain.CancelAlongside).
	if r.Outcome == domain.Cancelled {
		others, err := queryColumn[int64](ctx, tx, `SELECT id FROM questions WHERE run_id = ? AND state = 'pending' AND live = 0 ORDER BY id`, runID)
		if err != nil {
			return 0, fmt.Errorf("resolve: %w", err)
		}
		for _, c := range domain.CancelAlongside(r, others) {
			if err := db.resolve(ctx, tx, convID, runID, c); err != nil {
				return 0, err
			}
		}
	}
	var f domain.ResolveFacts
	var runState, kind string
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM questions WHERE run_id = ?1 AND state = 'pending'),
			(SELECT count(*) FROM steps WHERE run_id = ?1 AND state IN ('queued', 'started')),
			(SELECT state FROM runs WHERE id = ?1), (SELECT kind FROM conversations WHERE id = ?2)`, runID, convID).
		Scan(&f.Pending, &f.Active, &runState, &kind); err != nil {
		return 0, fmt.Errorf("resolve: %w", err)
	}
	f.State = domain.RunState(runState)
	f.Inbound = domain.ConversationKind(kind) == domain.KindInbound
	return db.changeRun(ctx, tx, convID, runID, domain.AfterResolve(f))
}

// Approve records one person's approval of a question that needs need of them, and
// resolves it (see Resolve) once need people approved the same values.
func (db *DB) Approve(ctx context.Context, r domain.Resolution, need int) (int64, error) {
	var resume int64
	err := db.tx(ctx, func(tx *Tx) error {
		convID, runID, state, err := tx.lockQuestion(ctx, r.QuestionID)
		if err != nil {
			return err
		}
		f := domain.ApprovalFacts{Pending: state == "pending", By: r.By}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(u.name, '') FROM conversations c LEFT JOIN users u ON u.id = c.user_id WHERE c.id = ?`, convID).Scan(&f.Owner); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM question_approvals WHERE question_id = ? AND approved_by = ?`, r.QuestionID, r.By).Scan(&f.Before); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		if err := domain.CheckApproval(f); err != nil {
			return err
		}
		vals, err := json.Marshal(r.Values)
		if err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		now := db.Now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO question_approvals (question_id, approved_by, on_behalf_of, vals, created_at) VALUES (?, ?, ?, ?, ?)`,
			r.QuestionID, r.By, r.OnBehalfOf, string(vals), formatTime(now)); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		r.At = now
		if _, err := db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, RunID: runID, Kind: domain.EventQuestionApproved, Resolution: &r}); err != nil {
			return err
		}
		by, err := queryColumn[string](ctx, tx, `SELECT approved_by FROM question_approvals WHERE question_id = ? AND vals = ? ORDER BY id`, r.QuestionID, string(vals))
		if err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		res, ok := domain.Approved(r, by, need)
		if !ok {
			return nil
		}
		resume, err = db.resolveAndResume(ctx, tx, res)
		return err
	})
	return resume, err
}

// supersede resolves the questions that query selects as superseded, with the reason.
func (db *DB) supersede(ctx context.Context, tx *Tx, by, reason, query string, args ...any) error {
	ids, err := queryColumn[int64](ctx, tx, query, args...)
	if err != nil {
		return fmt.Errorf("supersede: %w", err)
	}
	for _, id := range ids {
		var convID, runID int64
		if err := tx.QueryRowContext(ctx, `SELECT conversation_id, run_id FROM questions WHERE id = ?`, id).Scan(&convID, &runID); err != nil {
			return fmt.Errorf("supersede: %w", err)
		}
		if err := db.resolve(ctx, tx, convID, runID, domain.Resolution{QuestionID: id, Outcome: domain.Superseded, Reason: reason, By: by}); err != nil {
			return err
		}
	}
	return nil
}

// queryColumn runs a query that returns one column, of T: ids, names.
func queryColumn[T any](ctx context.Context, q queryer, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// resolve stores the answer row (unique per question), marks the question and logs the event.
func (db *DB) resolve(ctx context.Context, tx *Tx, convID, runID int64, r domain.Resolution) error {
	if len(r.Files) > 0 {
		var err error
		if r.Values, err = db.storeAnswerFiles(ctx, tx, convID, r); err != nil {
			return err
		}
	}
	vals, err := json.Marshal(r.Values)
	if err != nil {
		return fmt.Errorf("resolve: %w", err)
	}
	if r.Values == nil {
		vals = []byte("{}")
	}
	// Its callers read it pending, under the conversation's lock: the state and the answer
	// go in with the event, in one statement on PostgreSQL (see later). (Were it not pending,
	// the answer's row, one a question, would fail the transaction.)
	now := formatTime(db.Now())
	if err := tx.later(ctx, `UPDATE questions SET state = ?, resolved_at = ? WHERE id = ? AND state = 'pending'`, r.Outcome, now, r.QuestionID); err != nil {
		return fmt.Errorf("resolve: %w", err)
	}
	// With the event, in one statement on PostgreSQL.
	if err := tx.later(ctx, `INSERT INTO answers (question_id, outcome, vals, reason, answered_by, on_behalf_of, via, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.QuestionID, r.Outcome, string(vals), r.Reason, r.By, r.OnBehalfOf, r.Via, now); err != nil {
		return fmt.Errorf("resolve: %w", err)
	}
	if r.OnBehalfOf != "" {
		if err := db.audit(ctx, tx, r.By, "answer-on-behalf", convID, fmt.Sprintf("question %d %s for %s", r.QuestionID, r.Outcome, r.OnBehalfOf)); err != nil {
			return err
		}
	}
	if r.Via != "" {
		if err := db.audit(ctx, tx, r.By, "answer-with-token", convID, fmt.Sprintf("question %d %s with %s", r.QuestionID, r.Outcome, r.Via)); err != nil {
			return err
		}
	}
	r.At = db.Now()
	_, err = db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, RunID: runID, Kind: domain.EventQuestionResolved, Resolution: &r})
	return err
}

// DueQuestions returns pending questions whose deadline is at or before now.
func (db *DB) DueQuestions(ctx context.Context, now time.Time) ([]int64, error) {
	ids, err := queryColumn[int64](ctx, db.read, `SELECT id FROM questions WHERE state = 'pending' AND deadline IS NOT NULL AND deadline <= ? ORDER BY deadline`, formatTime(now))
	if err != nil {
		return nil, fmt.Errorf("due questions: %w", err)
	}
	return ids, nil
}

// LiveQuestions returns the pending questions asked on a live connection (Question.Live)
// whose step no longer runs (a crash, or an instance gone, cut it off): the connection went
// with it.
func (db *DB) LiveQuestions(ctx context.Context) ([]int64, error) {
	ids, err := queryColumn[int64](ctx, db.read, `SELECT id FROM questions q WHERE state = 'pending' AND live = 1
		AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = q.run_id AND s.state = 'started') ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("live questions: %w", err)
	}
	return ids, nil
}

// NextDeadline returns the earliest deadline or escalation among pending questions, zero
// when there is none.
func (db *DB) NextDeadline(ctx context.Context) (time.Time, error) {
	var d sql.NullString
	if err := db.read.QueryRowContext(ctx, `SELECT min(coalesce(min(deadline, escalate_at), deadline, escalate_at)) FROM questions
		WHERE state = 'pending' AND (deadline IS NOT NULL OR escalate_at IS NOT NULL)`).Scan(&d); err != nil {
		return time.Time{}, fmt.Errorf("next deadline: %w", err)
	}
	if !d.Valid {
		return time.Time{}, nil
	}
	return parseTime(d.String), nil
}

// approvals are the approvals of a question, oldest first.
func (db *DB) approvals(ctx context.Context, id int64) ([]domain.Resolution, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT approved_by, on_behalf_of, vals, created_at FROM question_approvals WHERE question_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("question %d approvals: %w", id, err)
	}
	defer rows.Close()
	var out []domain.Resolution
	for rows.Next() {
		r := domain.Resolution{QuestionID: id, Outcome: domain.Answered}
		var vals, at string
		if err := rows.Scan(&r.By, &r.OnBehalfOf, &vals, &at); err != nil {
			return nil, fmt.Errorf("question %d approvals: %w", id, err)
		}
		if err := json.Unmarshal([]byte(vals), &r.Values); err != nil {
			return nil, fmt.Errorf("question %d approvals: %w", id, err)
		}
		r.At = parseTime(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// InboundRequest returns the question a person's request id asked, with the digest of what
// it asked; ENOTFOUND when the id asked nothing (or its question was deleted).
func (db *DB) InboundRequest(ctx context.Context, userID int64, requestID string) (domain.QuestionRecord, string, error) {
	var digest string
	var id int64
	err := db.read.QueryRowContext(ctx, `SELECT digest, question_id FROM inbound_requests WHERE user_id = ? AND request_id = ?`, userID, requestID).Scan(&digest, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.QuestionRecord{}, "", domain.Errorf(domain.ENOTFOUND, "request_id %q asked nothing yet.", requestID)
	}
	if err != nil {
		return domain.QuestionRecord{}, "", fmt.Errorf("inbound request: %w", err)
	}
	rec, err := db.Question(ctx, id)
	return rec, digest, err
}

// flag is a bool as the 0 or 1 of an integer column, which both databases store alike.
func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
