package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// AddNote keeps a staff member's note on a conversation; audited.
func (db *DB) AddNote(ctx context.Context, convID int64, author, body string) (domain.StaffNote, error) {
	n := domain.StaffNote{ConversationID: convID, Author: author, Body: body}
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		n.At = db.Now()
		id, err := insertID(ctx, tx, `INSERT INTO staff_notes (conversation_id, author, body, created_at) VALUES (?, ?, ?, ?)`, convID, author, body, formatTime(n.At))
		if err != nil {
			return err
		}
		n.ID = id
		return db.audit(ctx, tx, author, "note", convID, fmt.Sprintf("note %d", id))
	})
	return n, err
}

// Notes are the notes staff left on a conversation, oldest first.
func (db *DB) Notes(ctx context.Context, convID int64) ([]domain.StaffNote, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, author, body, created_at FROM staff_notes WHERE conversation_id = ? ORDER BY id`, convID)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	defer rows.Close()
	var out []domain.StaffNote
	for rows.Next() {
		n := domain.StaffNote{ConversationID: convID}
		var at string
		if err := rows.Scan(&n.ID, &n.Author, &n.Body, &at); err != nil {
			return nil, fmt.Errorf("notes: %w", err)
		}
		n.At = parseTime(at)
		out = append(out, n)
	}
	return out, rows.Err()
}

// Labels are the labels staff keep, by name.
func (db *DB) Labels(ctx context.Context) ([]string, error) {
	return queryColumn[string](ctx, db.read, `SELECT name FROM labels ORDER BY name`)
}

// SetLabels replaces the labels staff keep: those gone come off every conversation, those
// kept stay on theirs; audited.
func (db *DB) SetLabels(ctx context.Context, actor string, names []string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "labels"); err != nil {
			return err
		}
		have, err := queryColumn[string](ctx, tx, `SELECT name FROM labels`)
		if err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, n := range names {
			keep[n] = true
		}
		for _, h := range have {
			if !keep[h] {
				if _, err := tx.ExecContext(ctx, `DELETE FROM conversation_labels WHERE label_id = (SELECT id FROM labels WHERE name = ?)`, h); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `DELETE FROM labels WHERE name = ?`, h); err != nil {
					return err
				}
			}
			delete(keep, h)
		}
		now := formatTime(db.Now())
		for _, n := range names {
			if keep[n] {
				if _, err := tx.ExecContext(ctx, `INSERT INTO labels (name, created_at) VALUES (?, ?)`, n, now); err != nil {
					return err
				}
			}
		}
		b, _ := json.Marshal(names)
		return db.audit(ctx, tx, actor, "labels", 0, string(b))
	})
}

// LabelConversation puts a label staff keep on a conversation, or takes it off; audited.
func (db *DB) LabelConversation(ctx context.Context, convID int64, label string, on bool, actor string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		var labelID int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM labels WHERE name = ?`, label).Scan(&labelID); err != nil {
			return domain.Errorf(domain.EINVALID, "There is no label %q: staff keep the labels under Review.", label)
		}
		action := "label"
		if on {
			if _, err := tx.ExecContext(ctx, `INSERT INTO conversation_labels (conversation_id, label_id, added_by, added_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (conversation_id, label_id) DO NOTHING`, convID, labelID, actor, formatTime(db.Now())); err != nil {
				return err
			}
		} else {
			action = "unlabel"
			if _, err := tx.ExecContext(ctx, `DELETE FROM conversation_labels WHERE conversation_id = ? AND label_id = ?`, convID, labelID); err != nil {
				return err
			}
		}
		return db.audit(ctx, tx, actor, action, convID, label)
	})
}

// ConversationLabels are the labels on a conversation, by name.
func (db *DB) ConversationLabels(ctx context.Context, convID int64) ([]string, error) {
	return queryColumn[string](ctx, db.read, `SELECT l.name FROM conversation_labels cl JOIN labels l ON l.id = cl.label_id
		WHERE cl.conversation_id = ? ORDER BY l.name`, convID)
}
