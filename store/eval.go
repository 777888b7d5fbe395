package store

import (
	"context"
	"fmt"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
)

// EvalConversations returns up to limit conversations the export's filter selects, by id,
// after the id given (see eval.Write).
func (db *DB) EvalConversations(ctx context.Context, f eval.Filter, after int64, limit int) ([]domain.Conversation, error) {
	query := `SELECT ` + conversationColumns + conversationsFrom + ` WHERE c.id > ?`
	args := []any{after}
	if !f.Since.IsZero() {
		query, args = query+` AND c.updated_at >= ?`, append(args, formatTime(f.Since))
	}
	if f.Agent != "" {
		query, args = query+` AND c.agent = ?`, append(args, f.Agent)
	}
	if f.Label != "" {
		query, args = query+` AND c.id IN (SELECT cl.conversation_id FROM conversation_labels cl JOIN labels l ON l.id = cl.label_id WHERE l.name = ?)`, append(args, f.Label)
	}
	out, err := db.conversations(ctx, query+` ORDER BY c.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return out, nil
}
