package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parley-chat/parley/domain"
)

// notify queues word of a question to the channels of a person (userID) or of a group
// (groupID: its own, and each member's), in the caller's transaction: those confirmed, and
// of the people who did not mute the agent that asks.
func (db *DB) notify(ctx context.Context, tx *Tx, questionID int64, reason string, userID, groupID int64) error {
	now := formatTime(db.Now())
	_, err := tx.ExecContext(ctx, `INSERT INTO notifications (channel_id, question_id, reason, next_at, created_at)
		SELECT c.id, ?, ?, ?, ? FROM channels c
		WHERE (c.user_id = ? OR c.group_id = ? OR c.user_id IN (SELECT user_id FROM group_members WHERE group_id = ? AND role = 'member'))
			AND c.confirmed_at IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM muted_agents m WHERE m.user_id = c.user_id
				AND m.agent = (SELECT cv.agent FROM questions q JOIN conversations cv ON cv.id = q.conversation_id WHERE q.id = ?))`,
		questionID, reason, now, now, userID, groupID, groupID, questionID)
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// claimFor is how long a delivery an instance took stays its own (PostgreSQL), unless the
// instance goes first: then the delivery is due at once for the others.
const claimFor = 5 * time.Minute

// DueNotifications returns the deliveries due at now (at most limit), with their channel and
// question. On PostgreSQL it takes them for this instance (NotificationTried says how it
// went), so that several instances never send one twice.
func (db *DB) DueNotifications(ctx context.Context, now time.Time, limit int) ([]domain.Notification, error) {
	var ids []int64
	var err error
	if db.pg {
		// One statement claims them; another instance's claim under way is not waited for.
		ids, err = queryColumn[int64](ctx, db.write, `UPDATE notifications SET next_at = ?, claimed_by = ? WHERE id IN (
			SELECT id FROM notifications WHERE state = 'pending'
				AND (next_at <= ? OR claimed_by <> '' AND claimed_by NOT IN (SELECT id FROM instances)) ORDER BY next_at, id LIMIT ?
				FOR UPDATE SKIP LOCKED) RETURNING id`, formatTime(now.Add(claimFor)), db.instance, formatTime(now), limit)
		err = storageError(err)
		db.noteWrite(err)
		slices.Sort(ids)
	} else {
		ids, err = queryColumn[int64](ctx, db.read, `SELECT id FROM notifications WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?`, formatTime(now), limit)
	}
	if err != nil {
		return nil, fmt.Errorf("due notifications: %w", err)
	}
	out := make([]domain.Notification, 0, len(ids))
	for _, id := range ids {
		n := domain.Notification{ID: id}
		var qid int64
		var created string
		err := db.read.QueryRowContext(ctx, `SELECT n.question_id, n.reason, n.attempts, c.id, c.kind, c.target, c.secret, c.label, coalesce(c.user_id, 0), coalesce(c.group_id, 0), c.created_at,
			coalesce((SELECT u.name FROM questions q JOIN conversations cv ON cv.id = q.conversation_id JOIN users u ON u.id = cv.user_id WHERE q.id = n.question_id), ''),
			coalesce(p.quiet_from, 0), coalesce(p.quiet_to, 0), coalesce(p.quiet_zone, '')
			FROM notifications n JOIN channels c ON c.id = n.channel_id LEFT JOIN users p ON p.id = c.user_id WHERE n.id = ?`, id).
			Scan(&qid, &n.Reason, &n.Attempts, &n.Channel.ID, &n.Channel.Kind, &n.Channel.Target, &n.Channel.Secret, &n.Channel.Label, &n.Channel.UserID, &n.Channel.GroupID, &created, &n.Owner,
				&n.Quiet.From, &n.Quiet.To, &n.Quiet.Zone)
		if errors.Is(err, sql.ErrNoRows) {
			continue // its channel went meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("due notification %d: %w", id, err)
		}
		n.Channel.Created = parseTime(created)
		if n.Question, err = db.Question(ctx, qid); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// NextNotification is when the next delivery is due (or an escalation, which queues some),
// zero when none waits.
func (db *DB) NextNotification(ctx context.Context) (time.Time, error) {
	var next sql.NullString
	// An escalation due queues deliveries due at once: the notifier looks again then.
	if err := db.read.QueryRowContext(ctx, `SELECT min(t) FROM (SELECT min(next_at) AS t FROM notifications WHERE state = 'pending'
		UNION ALL SELECT min(escalate_at) FROM questions WHERE escalate_at IS NOT NULL AND state = 'pending'`+db.goneClaims()+`) AS due`).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("next notification: %w", err)
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	return parseTime(next.String), nil
}

// goneClaims is, on PostgreSQL, the part of NextNotification that makes the deliveries an
// instance gone had taken due at once.
func (db *DB) goneClaims() string {
	if !db.pg {
		return ""
	}
	return `
		UNION ALL SELECT min(CAST('0001-01-01T00:00:00.000000000Z' AS TEXT)) FROM notifications WHERE state = 'pending'
			AND claimed_by <> '' AND claimed_by NOT IN (SELECT id FROM instances)`
}

// NotificationTried records a delivery: sent (errText empty), skipped (the question was
// resolved meanwhile: state "skipped"), or failed, to be tried again at next (zero: given
// up). The channel keeps the outcome, for where it is configured.
func (db *DB) NotificationTried(ctx context.Context, id int64, state, errText string, next time.Time) error {
	return db.tx(ctx, func(tx *Tx) error {
		now := formatTime(db.Now())
		nextAt := now
		switch {
		case state == "pending" && !next.IsZero():
			nextAt = formatTime(next)
		case state == "pending":
			state = "failed"
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notifications SET state = ?, attempts = attempts + 1, next_at = ?, last_error = ? WHERE id = ?`,
			state, nextAt, errText, id); err != nil {
			return fmt.Errorf("notification tried: %w", err)
		}
		if db.pg {
			if _, err := tx.ExecContext(ctx, `UPDATE notifications SET claimed_by = '' WHERE id = ?`, id); err != nil {
				return fmt.Errorf("notification tried: %w", err)
			}
		}
		switch {
		case state == "sent":
			_, err := tx.ExecContext(ctx, `UPDATE channels SET last_ok_at = ?, last_error = '' WHERE id = (SELECT channel_id FROM notifications WHERE id = ?)`, now, id)
			return err
		case errText != "":
			_, err := tx.ExecContext(ctx, `UPDATE channels SET last_error = ?, last_error_at = ? WHERE id = (SELECT channel_id FROM notifications WHERE id = ?)`, errText, now, id)
			return err
		}
		return nil
	})
}

// NotificationWaits puts a delivery off until then without counting a try (its person's
// quiet hours hold).
func (db *DB) NotificationWaits(ctx context.Context, id int64, until time.Time) error {
	return db.tx(ctx, func(tx *Tx) error {
		q := `UPDATE notifications SET next_at = ? WHERE id = ?`
		if db.pg {
			q = `UPDATE notifications SET next_at = ?, claimed_by = '' WHERE id = ?`
		}
		if _, err := tx.ExecContext(ctx, q, formatTime(until), id); err != nil {
			return fmt.Errorf("notification waits: %w", err)
		}
		return nil
	})
}

// DueEscalations returns the pending questions whose escalation is due at now.
func (db *DB) DueEscalations(ctx context.Context, now time.Time) ([]int64, error) {
	ids, err := queryColumn[int64](ctx, db.read, `SELECT id FROM questions WHERE escalate_at IS NOT NULL AND escalate_at <= ? AND state = 'pending' ORDER BY escalate_at`, formatTime(now))
	if err != nil {
		return nil, fmt.Errorf("due escalations: %w", err)
	}
	return ids, nil
}

// Escalate adds a pending question to its escalation's audience and queues word of it.
func (db *DB) Escalate(ctx context.Context, questionID int64) error {
	return db.tx(ctx, func(tx *Tx) error {
		convID, _, state, err := tx.lockQuestion(ctx, questionID)
		if err != nil {
			return err
		}
		var spec string
		var at sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT spec, escalate_at FROM questions WHERE id = ?`, questionID).Scan(&spec, &at); err != nil {
			return fmt.Errorf("escalate %d: %w", questionID, err)
		}
		if !at.Valid || state != "pending" {
			return nil
		}
		var q domain.Question
		if err := json.Unmarshal([]byte(spec), &q); err != nil || q.Escalate == nil {
			_, err := tx.ExecContext(ctx, `UPDATE questions SET escalate_at = NULL WHERE id = ?`, questionID)
			return err
		}
		e := q.Escalate
		var there int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM groups WHERE id = ?) + (SELECT count(*) FROM users WHERE id = ?)`, e.GroupID, e.UserID).Scan(&there); err != nil {
			return fmt.Errorf("escalate %d: %w", questionID, err)
		}
		if there == 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE questions SET escalate_at = NULL WHERE id = ?`, questionID); err != nil {
				return fmt.Errorf("escalate %d: %w", questionID, err)
			}
			return db.audit(ctx, tx, "parley", "escalate question", convID, fmt.Sprintf("question %d not escalated: %s is gone", questionID, e.To))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO question_audience (question_id, group_id, user_id, escalated, added_at) VALUES (?, ?, ?, 1, ?)`,
			questionID, nullID(e.GroupID), nullID(e.UserID), formatTime(db.Now())); err != nil {
			return fmt.Errorf("escalate %d: %w", questionID, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE questions SET escalate_at = NULL WHERE id = ?`, questionID); err != nil {
			return fmt.Errorf("escalate %d: %w", questionID, err)
		}
		if err := db.notify(ctx, tx, questionID, "escalated", e.UserID, e.GroupID); err != nil {
			return err
		}
		return db.audit(ctx, tx, "parley", "escalate question", convID, fmt.Sprintf("question %d to %s after %s", questionID, e.To, e.After))
	})
}
