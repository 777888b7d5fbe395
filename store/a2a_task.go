package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/agent"
)

// LinkA2ATask records which conversation an A2A task of Parley's server belongs to.
func (db *DB) LinkA2ATask(ctx context.Context, taskID, contextID, agentName string, conversationID int64) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO a2a_tasks (id, context_id, agent, conversation_id, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id`,
		taskID, contextID, agentName, conversationID, formatTime(db.Now()))
	if err != nil {
		return fmt.Errorf("link a2a task: %w", err)
	}
	return nil
}

// SaveA2ATask stores an A2A task's JSON.
func (db *DB) SaveA2ATask(ctx context.Context, taskID, contextID, agentName string, task []byte) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO a2a_tasks (id, context_id, agent, task, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET task = excluded.task, context_id = excluded.context_id, updated_at = excluded.updated_at
		WHERE a2a_tasks.agent = excluded.agent`,
		taskID, contextID, agentName, task, formatTime(db.Now()))
	if err != nil {
		return fmt.Errorf("save a2a task: %w", err)
	}
	return nil
}

// A2ATask returns a stored A2A task of the agent: its JSON (empty before its first save) and
// its conversation (0 when none yet), or ENOTFOUND. Another agent's task is not found.
func (db *DB) A2ATask(ctx context.Context, agentName, taskID string) ([]byte, int64, error) {
	var task string
	var conv sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT task, conversation_id FROM a2a_tasks WHERE id = ? AND agent = ?`, taskID, agentName).Scan(&task, &conv)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, agent.Errorf(agent.ENOTFOUND, "Task %s not found.", taskID)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("a2a task: %w", err)
	}
	return []byte(task), conv.Int64, nil
}

// A2AContextConversation returns the conversation of the agent's newest task in an A2A
// context, 0 when none.
func (db *DB) A2AContextConversation(ctx context.Context, agentName, contextID string) (int64, error) {
	var conv sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT conversation_id FROM a2a_tasks WHERE context_id = ? AND agent = ? AND conversation_id IS NOT NULL
		ORDER BY updated_at DESC LIMIT 1`, contextID, agentName).Scan(&conv)
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
	ids, err := queryIDs(ctx, db.read, `SELECT id FROM questions WHERE conversation_id = ? AND state = 'pending' ORDER BY id`, convID)
	if err != nil {
		return nil, fmt.Errorf("pending questions: %w", err)
	}
	return ids, nil
}
