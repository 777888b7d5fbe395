package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// LinkA2ATask records which conversation an A2A task of Parley's server belongs to, and that
// it is the client's. The task's part of the conversation's log starts after the
// conversation's newest event at its first link, which the audit log records as the client's
// creation of the task; a later link of the same task (a follow-up message) keeps that start.
// Another agent's or another client's task of that id is not found (ENOTFOUND).
func (db *DB) LinkA2ATask(ctx context.Context, taskID, contextID, agentName string, client domain.A2AClient, conversationID int64) error {
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "a2a task "+taskID); err != nil {
			return err
		}
		if err := tx.lockConversation(ctx, conversationID); err != nil { // its start is the log's end
			return err
		}
		now := formatTime(db.Now())
		var owner sql.NullInt64
		var owned string
		err := tx.QueryRowContext(ctx, `SELECT agent, client_id FROM a2a_tasks WHERE id = ?`, taskID).Scan(&owned, &owner)
		if err == nil {
			if owned != agentName || owner.Int64 != client.ID {
				return domain.Errorf(domain.ENOTFOUND, "Task %s not found.", taskID)
			}
			_, err = tx.ExecContext(ctx, `UPDATE a2a_tasks SET conversation_id = ?, updated_at = ? WHERE id = ?`, conversationID, now, taskID)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO a2a_tasks (id, context_id, agent, client_id, conversation_id, updated_at, from_event)
			VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM events WHERE conversation_id = ?))`,
			taskID, contextID, agentName, client.ID, conversationID, now, conversationID); err != nil {
			return err
		}
		return db.audit(ctx, tx, client.Via(), "create a2a task", conversationID, fmt.Sprintf("task %s of %s", taskID, agentName))
	})
	if err != nil && domain.ErrorCode(err) == "" {
		err = fmt.Errorf("link a2a task: %w", err)
	}
	return err
}

// A2ATask returns an A2A task of the agent that the client made, or ENOTFOUND: another
// agent's task, or another client's, is not found.
func (db *DB) A2ATask(ctx context.Context, agentName string, clientID int64, taskID string) (domain.A2ATask, error) {
	var t domain.A2ATask
	var conv sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT context_id, conversation_id, from_event,
		coalesce((SELECT min(n.from_event) FROM a2a_tasks n WHERE n.conversation_id = t.conversation_id AND n.from_event > t.from_event), 0)
		FROM a2a_tasks t WHERE id = ? AND agent = ? AND client_id = ?`, taskID, agentName, clientID).Scan(&t.ContextID, &conv, &t.From, &t.Until)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !conv.Valid) {
		return t, domain.Errorf(domain.ENOTFOUND, "Task %s not found.", taskID)
	}
	if err != nil {
		return t, fmt.Errorf("a2a task: %w", err)
	}
	t.ConversationID = conv.Int64
	return t, nil
}

// InterruptedA2ATasks lists the conversations of A2A tasks whose run a stop or a crash cut off.
func (db *DB) InterruptedA2ATasks(ctx context.Context) ([]int64, error) {
	ids, err := queryColumn[int64](ctx, db.read, `SELECT c.id FROM conversations c WHERE `+conversationState+` = 'interrupted'
		AND c.id IN (SELECT conversation_id FROM a2a_tasks) ORDER BY c.id`)
	if err != nil {
		return nil, fmt.Errorf("interrupted a2a tasks: %w", err)
	}
	return ids, nil
}

// A2AContextConversation returns the conversation of the agent's newest task in an A2A
// context of the client, 0 when none: clients that use the same context id do not share it.
func (db *DB) A2AContextConversation(ctx context.Context, agentName string, clientID int64, contextID string) (int64, error) {
	var conv sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT conversation_id FROM a2a_tasks WHERE context_id = ? AND agent = ? AND client_id = ? AND conversation_id IS NOT NULL
		ORDER BY updated_at DESC LIMIT 1`, contextID, agentName, clientID).Scan(&conv)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("a2a context: %w", err)
	}
	return conv.Int64, nil
}

// PendingQuestions returns the conversation's questions still waiting, oldest first.
func (db *DB) PendingQuestions(ctx context.Context, convID int64) ([]int64, error) {
	ids, err := queryColumn[int64](ctx, db.read, `SELECT id FROM questions WHERE conversation_id = ? AND state = 'pending' ORDER BY id`, convID)
	if err != nil {
		return nil, fmt.Errorf("pending questions: %w", err)
	}
	return ids, nil
}
