package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/agent"
)

// insertEvent appends ev to its conversation's log and returns it with id and time set.
func (db *DB) insertEvent(ctx context.Context, tx *sql.Tx, ev agent.Event) (agent.Event, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return ev, fmt.Errorf("encode %s event: %w", ev.Kind, err)
	}
	ev.At = db.Now()
	var runID any
	if ev.RunID != 0 {
		runID = ev.RunID
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO events (conversation_id, run_id, kind, payload, created_at)
		VALUES (?, ?, ?, ?, ?)`, ev.ConversationID, runID, ev.Kind, string(payload), formatTime(ev.At))
	if err != nil {
		return ev, fmt.Errorf("insert %s event: %w", ev.Kind, err)
	}
	ev.ID, _ = res.LastInsertId()
	if _, err := tx.ExecContext(ctx, `UPDATE conversations SET updated_at = ? WHERE id = ?`,
		formatTime(ev.At), ev.ConversationID); err != nil {
		return ev, fmt.Errorf("touch conversation: %w", err)
	}
	return ev, nil
}

// AppendEvent appends one event to a conversation's log.
func (db *DB) AppendEvent(ctx context.Context, ev agent.Event) (agent.Event, error) {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		ev, err = db.insertEvent(ctx, tx, ev)
		return err
	})
	return ev, err
}

// Events returns the conversation's events with an id above after, oldest first.
func (db *DB) Events(ctx context.Context, conversationID, after int64) ([]agent.Event, error) {
	return events(ctx, db.read, conversationID, after, true)
}

func events(ctx context.Context, q queryer, conversationID, after int64, withDeltas bool) ([]agent.Event, error) {
	query := `SELECT id, conversation_id, coalesce(run_id, 0), kind, payload, created_at FROM events
		WHERE conversation_id = ? AND id > ?`
	if !withDeltas {
		query += ` AND kind <> 'text_delta'`
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY id`, conversationID, after)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	var out []agent.Event
	for rows.Next() {
		var ev agent.Event
		var kind, payload, at string
		if err := rows.Scan(&ev.ID, &ev.ConversationID, &ev.RunID, &kind, &payload, &at); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		if err := json.Unmarshal([]byte(payload), &ev); err != nil {
			return nil, fmt.Errorf("event %d: %w", ev.ID, err)
		}
		ev.Kind, ev.At = agent.EventKind(kind), parseTime(at)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// LastEventID returns the id of the conversation's newest event, 0 when it has none.
func (db *DB) LastEventID(ctx context.Context, conversationID int64) (int64, error) {
	var id int64
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM events WHERE conversation_id = ?`, conversationID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("last event id: %w", err)
	}
	return id, nil
}

// Plans returns the conversation's plan updates up to and including event upTo, oldest first.
func (db *DB) Plans(ctx context.Context, conversationID, upTo int64) ([]agent.Plan, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT payload FROM events WHERE conversation_id = ? AND kind = 'plan' AND id <= ? ORDER BY id`, conversationID, upTo)
	if err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	defer rows.Close()
	var out []agent.Plan
	for rows.Next() {
		var payload string
		if err := rows.Scan(&payload); err != nil {
			return nil, err
		}
		var ev agent.Event
		if err := json.Unmarshal([]byte(payload), &ev); err != nil || ev.Plan == nil {
			return nil, fmt.Errorf("plan payload: %v", err)
		}
		out = append(out, *ev.Plan)
	}
	return out, rows.Err()
}

// Event returns one event of a conversation.
func (db *DB) Event(ctx context.Context, conversationID, id int64) (agent.Event, error) {
	ev := agent.Event{ID: id, ConversationID: conversationID}
	var kind, payload, at string
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(run_id, 0), kind, payload, created_at FROM events
		WHERE id = ? AND conversation_id = ?`, id, conversationID).Scan(&ev.RunID, &kind, &payload, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return ev, agent.Errorf(agent.ENOTFOUND, "Event %d not found.", id)
	}
	if err != nil {
		return ev, fmt.Errorf("event %d: %w", id, err)
	}
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		return ev, fmt.Errorf("event %d: %w", id, err)
	}
	ev.Kind, ev.At = agent.EventKind(kind), parseTime(at)
	return ev, nil
}
