package store

import (
	"context"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// audit records an action in the audit log, in the caller's transaction.
func (db *DB) audit(ctx context.Context, tx *Tx, actor, action string, convID int64, detail string) error {
	var conv any
	if convID != 0 {
		conv = convID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_log (at, actor, action, conversation_id, detail) VALUES (?, ?, ?, ?, ?)`,
		formatTime(db.Now()), actor, action, conv, detail); err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// Audit records an action that changes nothing in the ledger by itself, such as an A2A
// client's cancel of a task (which the runner then carries out), under the conversation.
func (db *DB) Audit(ctx context.Context, actor, action string, convID int64, detail string) error {
	return db.tx(ctx, func(tx *Tx) error { return db.audit(ctx, tx, actor, action, convID, detail) })
}

// Deletions returns the newest deletions of conversations in the audit log.
func (db *DB) Deletions(ctx context.Context, limit int) ([]domain.AuditEntry, error) {
	return db.auditEntries(ctx, `SELECT id, at, actor, action, 0, detail FROM audit_log WHERE action = 'delete conversation' ORDER BY id DESC LIMIT ?`, limit)
}

// AuditLog returns the audit entries of a conversation, oldest first; with conversation 0,
// the newest entries of all (limit of them).
func (db *DB) AuditLog(ctx context.Context, convID int64, limit int) ([]domain.AuditEntry, error) {
	const columns = `SELECT id, at, actor, action, coalesce(conversation_id, 0), detail FROM audit_log`
	query, args := columns+` WHERE conversation_id = ? ORDER BY id LIMIT ?`, []any{convID, limit}
	if convID == 0 {
		query, args = columns+` ORDER BY id DESC LIMIT ?`, []any{limit}
	}
	return db.auditEntries(ctx, query, args...)
}

func (db *DB) auditEntries(ctx context.Context, query string, args ...any) ([]domain.AuditEntry, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer rows.Close()
	var out []domain.AuditEntry
	for rows.Next() {
		var e domain.AuditEntry
		var at string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.ConversationID, &e.Detail); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, rows.Err()
}
