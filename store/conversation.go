package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// CreateConversation starts an empty conversation of the user's with the named agent. With a
// non-empty nonce the user has used already, it returns that conversation instead (a
// double-clicked start form); another person's nonce finds nothing of theirs.
func (db *DB) CreateConversation(ctx context.Context, userID int64, agentName, title, nonce string) (domain.Conversation, error) {
	return db.createConversation(ctx, domain.KindChat, userID, agentName, title, nonce)
}

// CreateInboundConversation starts the person's conversation of the questions an agent
// outside Parley asks (domain.KindInbound): of no agent of Parley's, found again by nonce.
func (db *DB) CreateInboundConversation(ctx context.Context, userID int64, title, nonce string) (domain.Conversation, error) {
	return db.createConversation(ctx, domain.KindInbound, userID, "", title, nonce)
}

func (db *DB) createConversation(ctx context.Context, kind domain.ConversationKind, userID int64, agentName, title, nonce string) (domain.Conversation, error) {
	var c domain.Conversation
	err := db.tx(ctx, func(tx *Tx) error {
		if nonce != "" {
			// Two starts with one nonce at once (a double-submitted form) make one.
			if err := tx.lockName(ctx, fmt.Sprintf("conversation nonce %d %s", userID, nonce)); err != nil {
				return err
			}
			var id int64
			// nonce <> '' as written: the partial index it reads is one a generic plan can use.
			err := tx.QueryRowContext(ctx, `SELECT id FROM conversations WHERE coalesce(user_id, 0) = ? AND nonce = ? AND nonce <> ''`, userID, nonce).Scan(&id)
			if err == nil {
				c, err = conversation(ctx, tx, id)
				return err
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("create conversation: %w", err)
			}
		}
		now := db.Now()
		var owner any
		if userID != 0 {
			owner = userID
		}
		// Ids go above every id deleted, too (see DeleteConversation).
		id, err := insertID(ctx, tx, `INSERT INTO conversations (id, kind, agent, title, nonce, user_id, created_at, updated_at)
			VALUES (max(coalesce((SELECT max(id) FROM conversations), 0), coalesce((SELECT id FROM id_floor WHERE name = 'conversations'), 0)) + 1,
			?, ?, ?, ?, ?, ?, ?)`, kind, agentName, title, nonce, owner, formatTime(now), formatTime(now))
		if err != nil {
			return fmt.Errorf("create conversation: %w", err)
		}
		c = domain.Conversation{ID: id, Kind: kind, Agent: agentName, Title: title, UserID: userID, CreatedAt: now, UpdatedAt: now}
		return nil
	})
	return c, err
}

// conversationState is the state of conversation c, which it derives from its runs': that of
// its current run (the newest of the version it shows), empty while it has none. The index
// runs_current finds that run.
const conversationState = `coalesce((SELECT r.state FROM runs r WHERE r.conversation_id = c.id AND r.version = c.version ORDER BY r.id DESC LIMIT 1), '')`

const conversationColumns = `c.id, c.kind, c.agent, c.title, ` + conversationState + `, c.language, coalesce(c.user_id, 0), coalesce(u.name, ''), c.created_at, c.updated_at, coalesce(c.archived_at, ''), c.version, ` + awaitsOthers

// awaitsOthers is whether the conversation's questions still waiting are all put to others
// than its owner (a group, an agent's approvers), and there is one: 1 or 0.
const awaitsOthers = `CASE WHEN EXISTS (SELECT 1 FROM questions qo WHERE qo.conversation_id = c.id AND qo.state = 'pending')
	AND NOT EXISTS (SELECT 1 FROM questions qo WHERE qo.conversation_id = c.id AND qo.state = 'pending'
		AND NOT EXISTS (SELECT 1 FROM question_audience ao WHERE ao.question_id = qo.id AND ao.escalated = 0)) THEN 1 ELSE 0 END`

// conversationsFrom is the FROM clause conversationColumns read.
const conversationsFrom = ` FROM conversations c LEFT JOIN users u ON u.id = c.user_id`

func scanConversation(row interface{ Scan(...any) error }) (domain.Conversation, error) {
	var c domain.Conversation
	dest, done := conversationDest(&c)
	if err := row.Scan(dest...); err != nil {
		return c, err
	}
	done()
	return c, nil
}

// conversationDest is where a row's conversationColumns go, for a query that reads more
// columns before them; done fills in what needs converting once the row is scanned.
func conversationDest(c *domain.Conversation) (dest []any, done func()) {
	var state, kind, created, updated, archived string
	var others int
	return []any{&c.ID, &kind, &c.Agent, &c.Title, &state, &c.Language, &c.UserID, &c.Owner, &created, &updated, &archived, &c.Version, &others}, func() {
		c.Kind, c.State, c.AwaitsOthers = domain.ConversationKind(kind), domain.RunState(state), others == 1
		c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
		if archived != "" {
			c.Archived = parseTime(archived)
		}
	}
}

// filterWhere is the WHERE conditions (on conversations c) and arguments of a filter.
func filterWhere(f domain.ConversationFilter) ([]string, []any) {
	var where []string
	var args []any
	if f.UserID != 0 {
		where, args = append(where, `c.user_id = ?`), append(args, f.UserID)
	}
	if f.State != "" {
		where, args = append(where, conversationState+` = ?`), append(args, f.State)
	}
	if f.Agent != "" {
		where, args = append(where, `c.agent = ?`), append(args, f.Agent)
	}
	switch f.Archived {
	case domain.ArchivedNot:
		where = append(where, `c.archived_at IS NULL`)
	case domain.ArchivedOnly:
		where = append(where, `c.archived_at IS NOT NULL`)
	}
	if !f.From.IsZero() {
		where, args = append(where, `c.updated_at >= ?`), append(args, formatTime(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, `c.updated_at < ?`), append(args, formatTime(f.To))
	}
	return where, args
}

// Conversation returns one conversation, or an ENOTFOUND error.
func (db *DB) Conversation(ctx context.Context, id int64) (domain.Conversation, error) {
	return conversation(ctx, db.read, id)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func conversation(ctx context.Context, q queryer, id int64) (domain.Conversation, error) {
	c, err := scanConversation(q.QueryRowContext(ctx, `SELECT `+conversationColumns+conversationsFrom+` WHERE c.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, domain.ConversationNotFound(id)
	}
	if err != nil {
		return c, fmt.Errorf("conversation %d: %w", id, err)
	}
	return c, nil
}

// ListConversations returns the conversations the filter selects, most recently active
// first, and whether there are more after them.
func (db *DB) ListConversations(ctx context.Context, f domain.ConversationFilter) ([]domain.Conversation, bool, error) {
	where, args := filterWhere(f)
	limit := f.PageSize()
	query := `SELECT ` + conversationColumns + conversationsFrom
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY c.updated_at DESC, c.id DESC LIMIT ? OFFSET ?`
	out, err := db.conversations(ctx, query, append(args, limit+1, max(f.Offset, 0))...)
	if err != nil {
		return nil, false, fmt.Errorf("list conversations: %w", err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// conversations runs a query of conversationColumns.
func (db *DB) conversations(ctx context.Context, query string, args ...any) ([]domain.Conversation, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
