package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// troubles are what brings a conversation to the review queue, each with when it happened,
// read from the tables that hold them (their partial indexes keep them few to read): a bad
// reply or an unneeded question (its opinion's last change), a failed run (its last change),
// a question declined or expired (its answer).
const troubles = `SELECT conversation_id, CASE WHEN item = 'reply' THEN 'bad reply' ELSE 'unneeded question' END AS trouble, updated_at AS at
		FROM feedback WHERE rating IN ('bad', 'unneeded')
	UNION ALL SELECT conversation_id, 'failed run', updated_at FROM runs WHERE state = 'failed'
	UNION ALL SELECT q.conversation_id, CASE WHEN a.outcome = 'declined' THEN 'declined question' ELSE 'expired question' END, a.created_at
		FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.outcome IN ('declined', 'expired')`

// NeedsReview lists the conversations something went wrong in since staff last marked them
// reviewed, most recent trouble first, with what went wrong, their mark and their assignee.
func (db *DB) NeedsReview(ctx context.Context, f domain.QueueFilter) ([]domain.QueueItem, error) {
	where, args := []string{`t.at > coalesce(m.reviewed_at, '')`}, []any{}
	if f.Trouble != "" {
		where, args = append(where, `t.trouble = ?`), append(args, f.Trouble)
	}
	if f.Agent != "" {
		where, args = append(where, `t.conversation_id IN (SELECT id FROM conversations WHERE agent = ?)`), append(args, f.Agent)
	}
	switch {
	case f.Assignee > 0:
		where, args = append(where, `m.assignee_id = ?`), append(args, f.Assignee)
	case f.Assignee < 0:
		where = append(where, `m.assignee_id IS NULL`)
	}
	if f.Label != "" {
		where, args = append(where, `t.conversation_id IN (SELECT cl.conversation_id FROM conversation_labels cl JOIN labels l ON l.id = cl.label_id WHERE l.name = ?)`),
			append(args, f.Label)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT t.conversation_id, t.trouble, max(t.at),
			coalesce(m.reviewed_by, ''), coalesce(m.reviewed_at, ''), coalesce(m.assignee_id, 0), coalesce(u.name, '')
		FROM (`+troubles+`) t LEFT JOIN review_marks m ON m.conversation_id = t.conversation_id LEFT JOIN users u ON u.id = m.assignee_id
		WHERE `+strings.Join(where, ` AND `)+`
		GROUP BY t.conversation_id, t.trouble, m.reviewed_by, m.reviewed_at, m.assignee_id, u.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("review queue: %w", err)
	}
	byConv := map[int64]*domain.QueueItem{}
	var order []int64
	for rows.Next() {
		var id int64
		var trouble, at, reviewed string
		var it domain.QueueItem
		if err := rows.Scan(&id, &trouble, &at, &it.ReviewedBy, &reviewed, &it.AssigneeID, &it.Assignee); err != nil {
			rows.Close()
			return nil, fmt.Errorf("review queue: %w", err)
		}
		p, ok := byConv[id]
		if !ok {
			it.ReviewedAt = parseTime(reviewed)
			p = &it
			byConv[id] = p
			order = append(order, id)
		}
		p.Troubles = append(p.Troubles, domain.Trouble(trouble))
		if t := parseTime(at); t.After(p.Since) {
			p.Since = t
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("review queue: %w", err)
	}
	var out []domain.QueueItem
	for _, id := range order {
		it := byConv[id]
		c, err := db.Conversation(ctx, id)
		if err != nil {
			continue // deleted meanwhile
		}
		it.Conversation = c
		if it.Labels, err = db.ConversationLabels(ctx, id); err != nil {
			return nil, err
		}
		slices.Sort(it.Troubles)
		out = append(out, *it)
	}
	slices.SortStableFunc(out, func(a, b domain.QueueItem) int { return b.Since.Compare(a.Since) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// NeedsReviewCount is how many conversations need review.
func (db *DB) NeedsReviewCount(ctx context.Context) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(DISTINCT t.conversation_id) FROM (`+troubles+`) t
		LEFT JOIN review_marks m ON m.conversation_id = t.conversation_id WHERE t.at > coalesce(m.reviewed_at, '')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("review queue: %w", err)
	}
	return n, nil
}

// MarkReviewed takes a conversation out of the review queue, until something goes wrong in
// it again; who and when are kept, and audited.
func (db *DB) MarkReviewed(ctx context.Context, convID int64, by string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		now := formatTime(db.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO review_marks (conversation_id, reviewed_at, reviewed_by) VALUES (?, ?, ?)
			ON CONFLICT (conversation_id) DO UPDATE SET reviewed_at = excluded.reviewed_at, reviewed_by = excluded.reviewed_by`, convID, now, by); err != nil {
			return err
		}
		return db.audit(ctx, tx, by, "mark-reviewed", convID, "")
	})
}

// Assign gives a conversation of the queue to a staff member (0: to no one); audited.
func (db *DB) Assign(ctx context.Context, convID, assigneeID int64, by string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		var name string
		if assigneeID != 0 {
			var role string
			if err := tx.QueryRowContext(ctx, `SELECT name, role FROM users WHERE id = ?`, assigneeID).Scan(&name, &role); err != nil || domain.Role(role) != domain.RoleStaff {
				return domain.Errorf(domain.EINVALID, "Conversations are assigned to staff members.")
			}
		}
		var assignee any
		if assigneeID != 0 {
			assignee = assigneeID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO review_marks (conversation_id, assignee_id, assigned_at) VALUES (?, ?, ?)
			ON CONFLICT (conversation_id) DO UPDATE SET assignee_id = excluded.assignee_id, assigned_at = excluded.assigned_at`,
			convID, assignee, formatTime(db.Now())); err != nil {
			return err
		}
		return db.audit(ctx, tx, by, "assign", convID, name)
	})
}
