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

// SetFeedback stores a person's opinion of an item of a conversation, replacing theirs if
// they gave one, and returns it as stored. The item must be the conversation's: a reply is
// one of its agent messages, a question one of its questions once answered or declined
// (ENOTFOUND otherwise, or EINVALID for a question still waiting). Whether the person may
// rate it is the caller's to check.
func (db *DB) SetFeedback(ctx context.Context, f domain.Feedback) (domain.Feedback, error) {
	reasons, err := json.Marshal(f.Reasons)
	if err != nil {
		return f, err
	}
	if f.Reasons == nil {
		reasons = []byte("[]")
	}
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, f.ConversationID); err != nil {
			return err
		}
		if err := feedbackItemOf(ctx, tx, f); err != nil {
			return err
		}
		f.At = db.Now()
		now := formatTime(f.At)
		_, err := tx.ExecContext(ctx, `INSERT INTO feedback (conversation_id, item, item_id, user_id, rating, comment, reasons, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (item, item_id, user_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment,
				reasons = excluded.reasons, updated_at = excluded.updated_at`,
			f.ConversationID, f.Item, f.ItemID, f.UserID, f.Rating, f.Comment, string(reasons), now, now)
		return err
	})
	return f, err
}

// feedbackItemOf checks that f's item is its conversation's, and may be rated.
func feedbackItemOf(ctx context.Context, tx *Tx, f domain.Feedback) error {
	switch f.Item {
	case domain.ItemReply:
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE id = ? AND conversation_id = ? AND kind = 'agent_message'`,
			f.ItemID, f.ConversationID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return domain.Errorf(domain.ENOTFOUND, "Reply %d not found.", f.ItemID)
		}
	case domain.ItemQuestion:
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM questions WHERE id = ? AND conversation_id = ?`, f.ItemID, f.ConversationID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return domain.QuestionNotFound(f.ItemID)
		}
		if err != nil {
			return err
		}
		if !domain.Rateable(domain.Outcome(state)) {
			return domain.Errorf(domain.EINVALID, "A question is rated once it is answered or declined.")
		}
	default:
		return domain.Errorf(domain.EINVALID, "There is no %q to rate.", f.Item)
	}
	return nil
}

// DeleteFeedback takes a person's opinion of an item back; none is no error.
func (db *DB) DeleteFeedback(ctx context.Context, convID int64, item domain.FeedbackItem, itemID, userID int64) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM feedback WHERE conversation_id = ? AND item = ? AND item_id = ? AND user_id = ?`, convID, item, itemID, userID)
		return err
	})
}

// Feedback returns the opinions given in a conversation, in the order they were first given;
// userID nonzero keeps one person's.
func (db *DB) Feedback(ctx context.Context, convID, userID int64) ([]domain.Feedback, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT f.item, f.item_id, coalesce(u.name, ''), f.user_id, f.rating, f.comment, f.reasons, f.updated_at
		FROM feedback f LEFT JOIN users u ON u.id = f.user_id
		WHERE f.conversation_id = ? AND (? = 0 OR f.user_id = ?) ORDER BY f.id`, convID, userID, userID)
	if err != nil {
		return nil, fmt.Errorf("feedback: %w", err)
	}
	defer rows.Close()
	var out []domain.Feedback
	for rows.Next() {
		f := domain.Feedback{ConversationID: convID}
		var reasons, at string
		if err := rows.Scan(&f.Item, &f.ItemID, &f.By, &f.UserID, &f.Rating, &f.Comment, &reasons, &at); err != nil {
			return nil, fmt.Errorf("feedback: %w", err)
		}
		if err := json.Unmarshal([]byte(reasons), &f.Reasons); err != nil {
			return nil, fmt.Errorf("feedback reasons: %w", err)
		}
		f.At = parseTime(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// FeedbackReasons are the reasons staff list for a bad reply or an unneeded question, in
// their order.
func (db *DB) FeedbackReasons(ctx context.Context) ([]string, error) {
	return queryColumn[string](ctx, db.read, `SELECT name FROM feedback_reasons ORDER BY position, name`)
}

// SetFeedbackReasons replaces the reasons staff list; the opinions given keep the reasons
// they were given with.
func (db *DB) SetFeedbackReasons(ctx context.Context, actor string, reasons []string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "feedback reasons"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM feedback_reasons`); err != nil {
			return err
		}
		for i, r := range reasons {
			if _, err := tx.ExecContext(ctx, `INSERT INTO feedback_reasons (name, position) VALUES (?, ?)`, r, i+1); err != nil {
				return err
			}
		}
		b, _ := json.Marshal(reasons)
		return db.audit(ctx, tx, actor, "feedback-reasons", 0, string(b))
	})
}

// FeedbackFacts are the opinions last given in [from, to), with their agent and when their
// conversation was marked reviewed (for the figures).
func (db *DB) FeedbackFacts(ctx context.Context, from, to time.Time) ([]domain.FeedbackFact, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT c.agent, f.item, f.rating, f.updated_at, coalesce(m.reviewed_at, '')
		FROM feedback f JOIN conversations c ON c.id = f.conversation_id LEFT JOIN review_marks m ON m.conversation_id = f.conversation_id
		WHERE f.updated_at >= ? AND f.updated_at < ? ORDER BY f.updated_at`, formatTime(from), formatTime(to))
	if err != nil {
		return nil, fmt.Errorf("feedback facts: %w", err)
	}
	defer rows.Close()
	var out []domain.FeedbackFact
	for rows.Next() {
		var x domain.FeedbackFact
		var at, reviewed string
		if err := rows.Scan(&x.Agent, &x.Item, &x.Rating, &at, &reviewed); err != nil {
			return nil, fmt.Errorf("feedback facts: %w", err)
		}
		x.At = parseTime(at)
		if reviewed != "" {
			x.ReviewedAt = parseTime(reviewed)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}
