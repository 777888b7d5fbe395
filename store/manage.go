package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// RenameConversation gives a conversation a new title.
func (db *DB) RenameConversation(ctx context.Context, id int64, title string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := execOne(ctx, tx, id, `UPDATE conversations SET title = ? WHERE id = ?`, title, id); err != nil {
			return err
		}
		return db.notifyConversation(ctx, tx, 'c', id)
	})
}

// ArchiveConversation moves a conversation out of its owner's lists (archived) or back.
// Nothing of it is removed: it stays readable, searchable and in staff review.
func (db *DB) ArchiveConversation(ctx context.Context, id int64, archived bool) error {
	var at any
	if archived {
		at = formatTime(db.Now())
	}
	return db.tx(ctx, func(tx *Tx) error {
		if err := execOne(ctx, tx, id, `UPDATE conversations SET archived_at = ? WHERE id = ?`, at, id); err != nil {
			return err
		}
		return db.notifyConversation(ctx, tx, 'c', id)
	})
}

// notifyConversation tells the other instances (PostgreSQL) that conversation id was
// changed ('c'), and whose it is, for their sidebars.
func (db *DB) notifyConversation(ctx context.Context, tx *Tx, what byte, id int64) error {
	if !db.pg {
		return nil
	}
	var account int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(user_id, 0) FROM conversations WHERE id = ?`, id).Scan(&account); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	tx.notify(string(what) + strconv.FormatInt(id, 10) + ":" + strconv.FormatInt(account, 10))
	return nil
}

func execOne(ctx context.Context, tx *Tx, id int64, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("conversation %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return domain.ConversationNotFound(id)
	}
	return nil
}

// DeleteConversation removes a conversation and everything in it: its messages and events,
// questions and answers, runs and steps, documents, A2A task and search entries. What stays
// is the audit log: its entries about the conversation lose their link to it, and a new one
// records who deleted it, with its title, owner and what it held. The caller stops any run
// of the conversation first: a step queued or running makes it an ECONFLICT error. Its id is
// never given to another conversation.
func (db *DB) DeleteConversation(ctx context.Context, id int64, actor string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, id); err != nil {
			return err
		}
		c, err := conversation(ctx, tx, id)
		if err != nil {
			return err
		}
		var busy bool
		err = tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM steps s JOIN runs r ON r.id = s.run_id
			WHERE r.conversation_id = ? AND s.state IN ('queued', 'started'))`, id).Scan(&busy)
		if err != nil {
			return fmt.Errorf("delete conversation %d: %w", id, err)
		}
		if busy {
			return domain.Errorf(domain.ECONFLICT, "The agent is working in this conversation: stop it, then delete.")
		}
		var messages, questions, documents int
		err = tx.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM events WHERE conversation_id = ?1 AND kind IN ('user_message', 'agent_message')),
			(SELECT count(*) FROM questions WHERE conversation_id = ?1),
			(SELECT count(*) FROM documents WHERE conversation_id = ?1)`, id).Scan(&messages, &questions, &documents)
		if err != nil {
			return fmt.Errorf("delete conversation %d: %w", id, err)
		}
		for _, q := range []string{
			`DELETE FROM documents WHERE conversation_id = ?`,
			`DELETE FROM feedback WHERE conversation_id = ?`,
			`DELETE FROM review_marks WHERE conversation_id = ?`,
			`DELETE FROM staff_notes WHERE conversation_id = ?`,
			`DELETE FROM conversation_labels WHERE conversation_id = ?`,
			`DELETE FROM answers WHERE question_id IN (SELECT id FROM questions WHERE conversation_id = ?)`,
			`DELETE FROM questions WHERE conversation_id = ?`,
			`DELETE FROM steps WHERE run_id IN (SELECT id FROM runs WHERE conversation_id = ?)`,
			`DELETE FROM queued_messages WHERE conversation_id = ?`,
			`DELETE FROM versions WHERE conversation_id = ?`,
			`DELETE FROM events WHERE conversation_id = ?`,
			`DELETE FROM runs WHERE conversation_id = ?`,
			`DELETE FROM a2a_tasks WHERE conversation_id = ?`,
			`DELETE FROM search WHERE conversation_id = ?`,
			`UPDATE audit_log SET conversation_id = NULL WHERE conversation_id = ?`,
			`DELETE FROM conversations WHERE id = ?`,
			// Its id is not given again.
			`INSERT INTO id_floor (name, id) VALUES ('conversations', ?1) ON CONFLICT (name) DO UPDATE SET id = max(id, excluded.id)`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("delete conversation %d: %s: %w", id, strings.Fields(q)[2], err)
			}
		}
		owner := c.Owner
		if owner == "" {
			owner = "nobody"
		}
		detail := fmt.Sprintf("conversation %d %q of %s with %s: %d messages, %d questions, %d documents",
			id, c.Title, owner, c.Agent, messages, questions, documents)
		if db.pg {
			tx.notify("g" + strconv.FormatInt(id, 10) + ":" + strconv.FormatInt(c.UserID, 10))
		}
		return db.audit(ctx, tx, actor, "delete conversation", 0, detail)
	})
}

// ConversationsTitled returns an account's conversations (archived ones too) whose title
// holds text, ignoring case, most recently active first.
func (db *DB) ConversationsTitled(ctx context.Context, userID int64, text string, limit int) ([]domain.Conversation, error) {
	like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text) + "%"
	out, err := db.conversations(ctx, `SELECT `+conversationColumns+conversationsFrom+`
		WHERE c.user_id = ? AND c.title LIKE ? ESCAPE '\' ORDER BY c.updated_at DESC, c.id DESC LIMIT ?`, userID, like, limit)
	if err != nil {
		return nil, fmt.Errorf("conversations titled: %w", err)
	}
	return out, nil
}
