package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/agent"
)

// CreateConversation starts an empty conversation with the named agent. With a non-empty
// nonce already used, it returns that conversation instead (a double-clicked start form).
func (db *DB) CreateConversation(ctx context.Context, agentName, title, nonce string) (agent.Conversation, error) {
	var c agent.Conversation
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if nonce != "" {
			var id int64
			err := tx.QueryRowContext(ctx, `SELECT id FROM conversations WHERE nonce = ?`, nonce).Scan(&id)
			if err == nil {
				c, err = conversation(ctx, tx, id)
				return err
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("create conversation: %w", err)
			}
		}
		now := db.Now()
		res, err := tx.ExecContext(ctx, `INSERT INTO conversations (agent, title, state, nonce, created_at, updated_at)
			VALUES (?, ?, '', ?, ?, ?)`, agentName, title, nonce, formatTime(now), formatTime(now))
		if err != nil {
			return fmt.Errorf("create conversation: %w", err)
		}
		id, _ := res.LastInsertId()
		c = agent.Conversation{ID: id, Agent: agentName, Title: title, CreatedAt: now, UpdatedAt: now}
		return nil
	})
	return c, err
}

const conversationColumns = `id, agent, title, state, language, created_at, updated_at`

func scanConversation(row interface{ Scan(...any) error }) (agent.Conversation, error) {
	var c agent.Conversation
	var state, created, updated string
	if err := row.Scan(&c.ID, &c.Agent, &c.Title, &state, &c.Language, &created, &updated); err != nil {
		return c, err
	}
	c.State = agent.RunState(state)
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	return c, nil
}

// Conversation returns one conversation, or an ENOTFOUND error.
func (db *DB) Conversation(ctx context.Context, id int64) (agent.Conversation, error) {
	return conversation(ctx, db.read, id)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func conversation(ctx context.Context, q queryer, id int64) (agent.Conversation, error) {
	c, err := scanConversation(q.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, agent.Errorf(agent.ENOTFOUND, "Conversation %d not found.", id)
	}
	if err != nil {
		return c, fmt.Errorf("conversation %d: %w", id, err)
	}
	return c, nil
}

// ListConversations returns conversations, most recently active first.
func (db *DB) ListConversations(ctx context.Context, limit int) ([]agent.Conversation, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+conversationColumns+` FROM conversations
		ORDER BY updated_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	defer rows.Close()
	var out []agent.Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, fmt.Errorf("list conversations: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
