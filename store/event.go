package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// insertEvent appends ev to its conversation's log and returns it with id and time set. The
// event reaches the observer when the transaction commits.
func (db *DB) insertEvent(ctx context.Context, tx *Tx, ev domain.Event) (domain.Event, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return ev, fmt.Errorf("encode %s event: %w", ev.Kind, err)
	}
	ev.At = db.Now()
	var runID any
	if ev.RunID != 0 {
		runID = ev.RunID
	}
	// Under the conversation's lock: its events commit in the order of their ids.
	if err := tx.lockConversation(ctx, ev.ConversationID); err != nil {
		return ev, err
	}
	at := formatTime(ev.At)
	// The conversation's updated_at is its first event's of the transaction (one update of
	// its row a transaction: each is a new version of the row, and of its indexes).
	touch := !tx.touched[ev.ConversationID]
	if db.pg {
		// One statement: the writes held (see later), the touch and the event.
		query, args := pgInsertEvent, []any{ev.ConversationID, runID, ev.Kind, string(payload), at, runID, ev.ConversationID}
		if touch {
			query, args = pgInsertEventTouch, []any{at, ev.ConversationID, ev.ConversationID, runID, ev.Kind, string(payload), at, runID}
		}
		query, args = tx.withHeld(query, args)
		if err := tx.Tx.QueryRowContext(ctx, query, args...).Scan(&ev.ID, &ev.Version); err != nil {
			return ev, fmt.Errorf("insert %s event: %w", ev.Kind, err)
		}
	} else {
		err = tx.StmtContext(ctx, db.stmt.insertEvent).QueryRowContext(ctx, ev.ConversationID, runID, ev.Kind, string(payload), at).Scan(&ev.ID, &ev.Version)
		if err != nil {
			return ev, fmt.Errorf("insert %s event: %w", ev.Kind, err)
		}
		if touch {
			if _, err := tx.StmtContext(ctx, db.stmt.touch).ExecContext(ctx, at, ev.ConversationID); err != nil {
				return ev, fmt.Errorf("touch conversation: %w", err)
			}
		}
	}
	if tx.touched == nil {
		tx.touched = map[int64]bool{}
	}
	tx.touched[ev.ConversationID] = true
	if err := db.releaseDrafts(ctx, tx, ev); err != nil {
		return ev, err
	}
	tx.events = append(tx.events, ev)
	return ev, nil
}

// pgInsertEvent and pgInsertEventTouch insert an event on PostgreSQL, the second after
// setting its conversation's updated_at, in one statement. An event belongs to its run's
// version, a run-less one to the version shown. Their parameters are bare ?s (see withHeld).
const (
	pgInsertEvent = `INSERT INTO events (conversation_id, run_id, kind, payload, created_at, version)
		VALUES (?, ?, ?, ?, ?, coalesce((SELECT version FROM runs WHERE id = ?), (SELECT version FROM conversations WHERE id = ?), 0)) RETURNING id, version`
	pgInsertEventTouch = `WITH touched AS (UPDATE conversations SET updated_at = ? WHERE id = ? RETURNING version)
		INSERT INTO events (conversation_id, run_id, kind, payload, created_at, version)
		SELECT ?, ?, ?, ?, ?, coalesce((SELECT version FROM runs WHERE id = ?), touched.version, 0) FROM touched RETURNING id, version`
)

// AppendEvent appends one event to a conversation's log. A finished agent message makes its
// drafts useless: it holds all their text.
func (db *DB) AppendEvent(ctx context.Context, ev domain.Event) (domain.Event, error) {
	err := db.tx(ctx, func(tx *Tx) error {
		var err error
		ev, err = db.insertEvent(ctx, tx, ev)
		return err
	})
	return ev, err
}

// Events returns the events of the version the conversation shows with an id above after,
// oldest first.
func (db *DB) Events(ctx context.Context, conversationID, after int64) ([]domain.Event, error) {
	return events(ctx, db.read, conversationID, after)
}

// events returns the events of the version the conversation shows with an id above after.
func events(ctx context.Context, q queryer, conversationID, after int64) ([]domain.Event, error) {
	vs, shown, err := versionsOf(ctx, q, conversationID)
	if err != nil {
		return nil, err
	}
	return pathEvents(ctx, q, conversationID, vs.Path(shown), after)
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
func (db *DB) Plans(ctx context.Context, conversationID, upTo int64) ([]domain.Plan, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT payload FROM events WHERE conversation_id = ? AND kind = 'plan' AND id <= ? ORDER BY id`, conversationID, upTo)
	if err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	defer rows.Close()
	var out []domain.Plan
	for rows.Next() {
		var payload string
		if err := rows.Scan(&payload); err != nil {
			return nil, err
		}
		var ev domain.Event
		if err := json.Unmarshal([]byte(payload), &ev); err != nil || ev.Plan == nil {
			return nil, fmt.Errorf("plan payload: %v", err)
		}
		out = append(out, *ev.Plan)
	}
	return out, rows.Err()
}

// Event returns one event of a conversation.
func (db *DB) Event(ctx context.Context, conversationID, id int64) (domain.Event, error) {
	ev := domain.Event{ID: id, ConversationID: conversationID}
	var kind, payload, at string
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(run_id, 0), kind, payload, created_at, version FROM events
		WHERE id = ? AND conversation_id = ?`, id, conversationID).Scan(&ev.RunID, &kind, &payload, &at, &ev.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return ev, domain.Errorf(domain.ENOTFOUND, "Event %d not found.", id)
	}
	if err != nil {
		return ev, fmt.Errorf("event %d: %w", id, err)
	}
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		return ev, fmt.Errorf("event %d: %w", id, err)
	}
	ev.Kind, ev.At = domain.EventKind(kind), parseTime(at)
	return ev, nil
}
