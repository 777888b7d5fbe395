package store

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-chat/parley/domain"
)

// What the operator's metrics read: how writes go, and counts the database keeps anyway.

// ObserveWrites sets the function told of each write transaction once it is over: how long
// it held the writer (begin, the work, commit and the hand-over of its events) and the
// error it failed with, if any (a refusal such as ECONFLICT included). It runs while the
// writer is held, so it must be quick.
func (db *DB) ObserveWrites(fn func(took time.Duration, err error)) {
	db.writeMu.Lock()
	db.writes = fn
	db.writeMu.Unlock()
}

// timeWrite tells the write observer of a transaction that began at start; db.writeMu is held.
func (db *DB) timeWrite(start time.Time, err *error) { db.writes(time.Since(start), *err) }

// RunStateCounts counts the conversations by the state of their current run; conversations
// without a run yet are left out.
func (db *DB) RunStateCounts(ctx context.Context) (map[domain.RunState]int, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT state, count(*) FROM (SELECT `+conversationState+` AS state FROM conversations c) AS s
		WHERE state <> '' GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count run states: %w", err)
	}
	defer rows.Close()
	out := map[domain.RunState]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("count run states: %w", err)
		}
		out[domain.RunState(state)] = n
	}
	return out, rows.Err()
}

// NewestEventID is the id of the newest event of all conversations (0 when there is
// none): where ResolvedSince starts from to count what happens from now on.
func (db *DB) NewestEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := db.read.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("newest event id: %w", err)
	}
	return id, nil
}

// ResolvedSince returns the questions resolved by the events after event after, in the
// order they were resolved, and the id to pass as after next time. Event ids are never
// reused, so that calls in turn see each resolution once (but those of conversations
// deleted meanwhile).
func (db *DB) ResolvedSince(ctx context.Context, after int64) ([]domain.QuestionFact, int64, error) {
	// The newest id first: every event up to it has committed, so the range misses none.
	upTo, err := db.NewestEventID(ctx)
	if err != nil {
		return nil, after, fmt.Errorf("resolved questions: %w", err)
	}
	if upTo <= after {
		return nil, after, nil
	}
	rows, err := db.read.QueryContext(ctx, `SELECT c.agent, CASE WHEN c.kind = 'inbound' THEN 1 ELSE 0 END, q.created_at, q.state, coalesce(q.resolved_at, '')
		FROM events e JOIN questions q ON q.id = json_extract(e.payload, '$.resolution.question_id')
		JOIN conversations c ON c.id = q.conversation_id
		WHERE e.id > ? AND e.id <= ? AND e.kind = 'question_resolved' ORDER BY e.id`, after, upTo)
	if err != nil {
		return nil, after, fmt.Errorf("resolved questions: %w", err)
	}
	facts, err := scanQuestionFacts(rows)
	if err != nil {
		return nil, after, fmt.Errorf("resolved questions: %w", err)
	}
	return facts, upTo, nil
}
