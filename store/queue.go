package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// queueMessage keeps a message sent while the agent works, to be sent when the run ends.
func (db *DB) queueMessage(ctx context.Context, tx *Tx, c domain.Conversation, m pendingMessage) (int64, error) {
	ev, err := db.insertEvent(ctx, tx, domain.Event{ConversationID: c.ID, Kind: domain.EventMessageQueued, Text: m.text, Author: m.author, Nonce: m.nonce, Documents: m.docs})
	if err != nil {
		return 0, err
	}
	docs, err := json.Marshal(m.docs)
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO queued_messages (event_id, conversation_id, author, text, nonce, documents, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		ev.ID, c.ID, m.author, m.text, m.nonce, string(docs), formatTime(ev.At)); err != nil {
		return 0, fmt.Errorf("queue message: %w", err)
	}
	return ev.ID, nil
}

// takeQueued removes the conversation's queued messages, oldest first, for a run to send.
func (db *DB) takeQueued(ctx context.Context, tx *Tx, convID int64) ([]pendingMessage, error) {
	qs, err := queued(ctx, tx, convID)
	if err != nil || len(qs) == 0 {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM queued_messages WHERE conversation_id = ?`, convID); err != nil {
		return nil, fmt.Errorf("take queued: %w", err)
	}
	out := make([]pendingMessage, len(qs))
	for i, q := range qs {
		out[i] = pendingMessage{text: q.Text, author: q.Author, docs: q.Documents, queued: q.ID}
	}
	return out, nil
}

func queued(ctx context.Context, q queryer, convID int64) ([]domain.QueuedMessage, error) {
	rows, err := q.QueryContext(ctx, `SELECT event_id, author, text, documents, created_at FROM queued_messages WHERE conversation_id = ? ORDER BY event_id`, convID)
	if err != nil {
		return nil, fmt.Errorf("queued messages: %w", err)
	}
	defer rows.Close()
	var out []domain.QueuedMessage
	for rows.Next() {
		var m domain.QueuedMessage
		var docs, at string
		if err := rows.Scan(&m.ID, &m.Author, &m.Text, &docs, &at); err != nil {
			return nil, fmt.Errorf("queued messages: %w", err)
		}
		if err := json.Unmarshal([]byte(docs), &m.Documents); err != nil {
			return nil, fmt.Errorf("queued message %d: %w", m.ID, err)
		}
		m.At = parseTime(at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// Queued returns the conversation's queued messages, oldest first.
func (db *DB) Queued(ctx context.Context, convID int64) ([]domain.QueuedMessage, error) {
	return queued(ctx, db.read, convID)
}

// Unqueue removes a queued message before it is sent; ENOTFOUND once it was sent or removed.
func (db *DB) Unqueue(ctx context.Context, convID, id int64, by string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM queued_messages WHERE conversation_id = ? AND event_id = ?`, convID, id)
		if err != nil {
			return fmt.Errorf("unqueue: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return domain.Errorf(domain.ENOTFOUND, "That message is no longer queued: it was sent or removed.")
		}
		_, err = db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, Kind: domain.EventMessageUnqueued, Queued: id, Author: by})
		return err
	})
}

// SendQueued sends the queued messages now, in a run of their own: ErrRunning while the
// agent works, ENOTFOUND when nothing is queued.
func (db *DB) SendQueued(ctx context.Context, convID int64) (int64, error) {
	var step int64
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		c, err := conversation(ctx, tx, convID)
		if err != nil {
			return err
		}
		// Nothing queued is said first: a second Send now must not stop the reply to what
		// the first sent.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM queued_messages WHERE conversation_id = ?`, convID).Scan(&n); err != nil {
			return fmt.Errorf("send queued: %w", err)
		}
		if n == 0 {
			return domain.Errorf(domain.ENOTFOUND, "Nothing is queued: the messages were sent or removed.")
		}
		if err := domain.CheckBranching(c, domain.SendQueued); err != nil {
			return err
		}
		msgs, err := db.takeQueued(ctx, tx, convID)
		if err != nil {
			return err
		}
		step, err = db.newRun(ctx, tx, c, "", msgs)
		return err
	})
	return step, err
}

// sendQueued starts, when a run ended, a run that sends the messages queued meanwhile: 0
// when none are.
func (db *DB) sendQueued(ctx context.Context, tx *Tx, convID int64) (int64, error) {
	msgs, err := db.takeQueued(ctx, tx, convID)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	c, err := conversation(ctx, tx, convID)
	if err != nil {
		return 0, err
	}
	return db.newRun(ctx, tx, c, "", msgs)
}
