package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-chat/parley/domain"
)

// AddChannel adds a person's or a group's channel (one of ch.UserID and ch.GroupID). An email
// address waits for its confirmation (ConfirmToken, ConfirmChannel); the other kinds are
// confirmed as they are added. A push subscription's endpoint belongs to one browser: adding
// it again moves it (the same person again, or another signed in there, who must give the
// subscription's keys as kept: only that browser has them).
func (db *DB) AddChannel(ctx context.Context, ch domain.Channel, actor string) (domain.Channel, error) {
	target, err := domain.CheckChannel(ch.Kind, ch.Target)
	if err != nil {
		return ch, err
	}
	ch.Target, ch.Created = target, db.Now()
	var confirmed any = formatTime(ch.Created)
	if ch.Kind == domain.ChannelEmail {
		confirmed = nil
	} else {
		ch.Confirmed = ch.Created
	}
	err = db.tx(ctx, func(tx *sql.Tx) error {
		if ch.Kind == domain.ChannelPush {
			// The browser that holds the subscription has its keys: only with them is an
			// endpoint of another person's moved (someone else signed in on that browser).
			var id, owner int64
			var secret string
			err := tx.QueryRowContext(ctx, `SELECT id, coalesce(user_id, 0), secret FROM channels WHERE kind = 'push' AND target = ?`, ch.Target).Scan(&id, &owner, &secret)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return fmt.Errorf("add channel: %w", err)
			case owner != ch.UserID && secret != ch.Secret:
				return domain.Errorf(domain.EINVALID, "That push subscription is another person's device.")
			default:
				if _, err := tx.ExecContext(ctx, `DELETE FROM channels WHERE id = ?`, id); err != nil {
					return fmt.Errorf("add channel: %w", err)
				}
				if owner != ch.UserID {
					if err := db.audit(ctx, tx, actor, "remove channel", 0, fmt.Sprintf("push %d of user %d: the device subscribed for user %d", id, owner, ch.UserID)); err != nil {
						return err
					}
				}
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM channels WHERE coalesce(user_id, 0) = ? AND coalesce(group_id, 0) = ? AND kind = ? AND target = ?`,
			ch.UserID, ch.GroupID, ch.Kind, ch.Target).Scan(&n); err != nil {
			return fmt.Errorf("add channel: %w", err)
		}
		if n > 0 {
			return domain.Errorf(domain.EINVALID, "That %s is there already.", ch.Kind.Noun())
		}
		var err error
		ch.ID, err = insertID(ctx, tx, `INSERT INTO channels (user_id, group_id, kind, target, secret, label, created_at, confirmed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			nullID(ch.UserID), nullID(ch.GroupID), ch.Kind, ch.Target, ch.Secret, ch.Label, formatTime(ch.Created), confirmed)
		if err != nil {
			return fmt.Errorf("add channel: %w", err)
		}
		return db.audit(ctx, tx, actor, "add channel", 0, fmt.Sprintf("%s %d for user %d, group %d", ch.Kind, ch.ID, ch.UserID, ch.GroupID))
	})
	return ch, err
}

// ConfirmFor is how long the link that confirms an email address works.
const ConfirmFor = 24 * time.Hour

// ConfirmToken makes a new link token for an unconfirmed email channel of the person's
// (userID) or of the group's (groupID), valid for ConfirmFor; the one before stops working.
// Only a hash of it is kept.
func (db *DB) ConfirmToken(ctx context.Context, id, userID, groupID int64) (domain.Channel, string, error) {
	token := newToken()
	var ch domain.Channel
	err := db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE channels SET confirm_hash = ?, confirm_until = ? WHERE id = ? AND coalesce(user_id, 0) = ? AND coalesce(group_id, 0) = ?
			AND kind = 'email' AND confirmed_at IS NULL`, hashToken(token), formatTime(db.Now().Add(ConfirmFor)), id, userID, groupID)
		if err != nil {
			return fmt.Errorf("confirm token: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return domain.ErrNoChannel
		}
		ch, err = channel(ctx, tx, id)
		return err
	})
	return ch, token, err
}

// Confirmation returns the unconfirmed email channel whose link holds token, changing
// nothing (the page the link opens names the address); ENOTFOUND as ConfirmChannel gives it.
func (db *DB) Confirmation(ctx context.Context, token string) (domain.Channel, error) {
	var id int64
	err := db.read.QueryRowContext(ctx, `SELECT id FROM channels WHERE confirm_hash = ? AND confirm_until > ? AND confirmed_at IS NULL`,
		hashToken(token), formatTime(db.Now())).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) || token == "" {
		return domain.Channel{}, errNoConfirmation
	}
	if err != nil {
		return domain.Channel{}, fmt.Errorf("confirmation: %w", err)
	}
	return channel(ctx, db.read, id)
}

// errNoConfirmation is a confirmation link that confirms nothing (any more).
var errNoConfirmation = domain.Errorf(domain.ENOTFOUND, "This link does not confirm anything: it was used already, or a newer one was sent, or it is more than a day old. Send a new one from where the address was added.")

// ConfirmChannel confirms the email address whose link holds token; from then on it gets word
// of questions. A token used, replaced or older than ConfirmFor gives ENOTFOUND.
func (db *DB) ConfirmChannel(ctx context.Context, token string) (domain.Channel, error) {
	var ch domain.Channel
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM channels WHERE confirm_hash = ? AND confirm_until > ? AND confirmed_at IS NULL`,
			hashToken(token), formatTime(db.Now())).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) || token == "" {
			return errNoConfirmation
		}
		if err != nil {
			return fmt.Errorf("confirm channel: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE channels SET confirmed_at = ?, confirm_hash = '', confirm_until = NULL WHERE id = ?`, formatTime(db.Now()), id); err != nil {
			return fmt.Errorf("confirm channel: %w", err)
		}
		if ch, err = channel(ctx, tx, id); err != nil {
			return err
		}
		return db.audit(ctx, tx, ch.Target, "confirm channel", 0, fmt.Sprintf("email %d for user %d, group %d", id, ch.UserID, ch.GroupID))
	})
	return ch, err
}

// RemoveChannel removes a channel of the person's (userID) or of the group's (groupID).
func (db *DB) RemoveChannel(ctx context.Context, id, userID, groupID int64, actor string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM channels WHERE id = ? AND coalesce(user_id, 0) = ? AND coalesce(group_id, 0) = ?`, id, userID, groupID)
		if err != nil {
			return fmt.Errorf("remove channel: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return domain.ErrNoChannel
		}
		return db.audit(ctx, tx, actor, "remove channel", 0, fmt.Sprintf("channel %d", id))
	})
}

// RemovePush removes the person's push subscription of the endpoint (the browser said it
// is no longer subscribed).
func (db *DB) RemovePush(ctx context.Context, userID int64, endpoint, actor string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM channels WHERE kind = 'push' AND target = ? AND user_id = ?`, endpoint, userID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return domain.ErrNoChannel
		}
		if err != nil {
			return fmt.Errorf("remove push: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channels WHERE id = ?`, id); err != nil {
			return fmt.Errorf("remove push: %w", err)
		}
		return db.audit(ctx, tx, actor, "remove channel", 0, fmt.Sprintf("channel %d", id))
	})
}

// DropChannel removes a channel its service said is gone for good (a push subscription
// answered 404 or 410), and its deliveries with it.
func (db *DB) DropChannel(ctx context.Context, id int64, why string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM channels WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("drop channel: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		return db.audit(ctx, tx, "parley", "remove channel", 0, fmt.Sprintf("channel %d: %s", id, why))
	})
}

const channelColumns = `id, kind, target, label, coalesce(user_id, 0), coalesce(group_id, 0), created_at, coalesce(confirmed_at, ''),
	coalesce(last_ok_at, ''), last_error, coalesce(last_error_at, '')`

func scanChannel(row interface{ Scan(...any) error }) (domain.Channel, error) {
	var ch domain.Channel
	var created, confirmed, ok, failed string
	if err := row.Scan(&ch.ID, &ch.Kind, &ch.Target, &ch.Label, &ch.UserID, &ch.GroupID, &created, &confirmed, &ok, &ch.LastError, &failed); err != nil {
		return ch, err
	}
	ch.Created, ch.Confirmed, ch.LastOK, ch.LastErrorAt = parseTime(created), parseTime(confirmed), parseTime(ok), parseTime(failed)
	return ch, nil
}

func channel(ctx context.Context, q queryer, id int64) (domain.Channel, error) {
	ch, err := scanChannel(q.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ch, domain.ErrNoChannel
	}
	if err != nil {
		return ch, fmt.Errorf("channel %d: %w", id, err)
	}
	return ch, nil
}

// Channels returns a person's channels (userID) or a group's (groupID), oldest first.
func (db *DB) Channels(ctx context.Context, userID, groupID int64) ([]domain.Channel, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+channelColumns+` FROM channels
		WHERE coalesce(user_id, 0) = ? AND coalesce(group_id, 0) = ? ORDER BY id`, userID, groupID)
	if err != nil {
		return nil, fmt.Errorf("channels: %w", err)
	}
	defer rows.Close()
	var out []domain.Channel
	for rows.Next() {
		ch, err := scanChannel(rows)
		if err != nil {
			return nil, fmt.Errorf("channels: %w", err)
		}
		out = append(out, ch)
	}
	return out, rows.Err()
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// notify queues word of a question to the channels of a person (userID) or of a group
// (groupID: its own, and each member's), in the caller's transaction: those confirmed, and
// of the people who did not mute the agent that asks.
func (db *DB) notify(ctx context.Context, tx *sql.Tx, questionID int64, reason string, userID, groupID int64) error {
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
		err = db.tx(ctx, func(tx *sql.Tx) error {
			ids, err = queryColumn[int64](ctx, tx, `SELECT id FROM notifications WHERE state = 'pending'
				AND (next_at <= ? OR claimed_by <> '' AND claimed_by NOT IN (SELECT id FROM instances)) ORDER BY next_at, id LIMIT ?
				FOR UPDATE SKIP LOCKED`, formatTime(now), limit) // another instance's claim under way is not waited for
			for _, id := range ids {
				if err == nil {
					_, err = tx.ExecContext(ctx, `UPDATE notifications SET next_at = ?, claimed_by = ? WHERE id = ?`, formatTime(now.Add(claimFor)), db.instance, id)
				}
			}
			return err
		})
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
	return db.tx(ctx, func(tx *sql.Tx) error {
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
	return db.tx(ctx, func(tx *sql.Tx) error {
		var spec, state string
		var convID int64
		var at sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT conversation_id, spec, state, escalate_at FROM questions WHERE id = ?`, questionID).Scan(&convID, &spec, &state, &at); err != nil {
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

// newToken is 32 random bytes, in hex: a link's secret.
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// NotificationWaits puts a delivery off until then without counting a try (its person's
// quiet hours hold).
func (db *DB) NotificationWaits(ctx context.Context, id int64, until time.Time) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
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

// NotifyPrefs returns what the person chose about word of their questions (see
// domain.NotifyPrefs).
func (db *DB) NotifyPrefs(ctx context.Context, userID int64) (domain.NotifyPrefs, error) {
	var p domain.NotifyPrefs
	if err := db.read.QueryRowContext(ctx, `SELECT quiet_from, quiet_to, quiet_zone FROM users WHERE id = ?`, userID).
		Scan(&p.Quiet.From, &p.Quiet.To, &p.Quiet.Zone); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return p, domain.ErrNoUser
		}
		return p, fmt.Errorf("notify prefs: %w", err)
	}
	var err error
	p.Muted, err = queryColumn[string](ctx, db.read, `SELECT agent FROM muted_agents WHERE user_id = ? ORDER BY agent`, userID)
	if err != nil {
		return p, fmt.Errorf("notify prefs: %w", err)
	}
	return p, nil
}

// SetNotifyPrefs stores the person's choices. Deliveries already queued keep going (a mute
// holds from the next question on); quiet hours hold for them too.
func (db *DB) SetNotifyPrefs(ctx context.Context, userID int64, p domain.NotifyPrefs, actor string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET quiet_from = ?, quiet_to = ?, quiet_zone = ? WHERE id = ?`,
			p.Quiet.From, p.Quiet.To, p.Quiet.Zone, userID); err != nil {
			return fmt.Errorf("set notify prefs: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM muted_agents WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("set notify prefs: %w", err)
		}
		for _, a := range p.Muted {
			if _, err := tx.ExecContext(ctx, `INSERT INTO muted_agents (user_id, agent) VALUES (?, ?) ON CONFLICT DO NOTHING`, userID, a); err != nil {
				return fmt.Errorf("set notify prefs: %w", err)
			}
		}
		detail := fmt.Sprintf("%d agents muted", len(p.Muted))
		if p.Quiet.On() {
			detail += fmt.Sprintf(", quiet %s to %s %s", domain.Clock(p.Quiet.From), domain.Clock(p.Quiet.To), p.Quiet.Zone)
		}
		return db.audit(ctx, tx, actor, "set notifications", 0, detail)
	})
}

// ServerKey returns the key Parley keeps under name, made by make the first time it is
// asked for (by whichever instance comes first: the others read that one).
func (db *DB) ServerKey(ctx context.Context, name string, make func() (string, error)) (string, error) {
	var v string
	err := db.read.QueryRowContext(ctx, `SELECT value FROM server_keys WHERE name = ?`, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("server key %s: %w", name, err)
	}
	made, err := make()
	if err != nil {
		return "", fmt.Errorf("server key %s: %w", name, err)
	}
	err = db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO server_keys (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			name, made, formatTime(db.Now())); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT value FROM server_keys WHERE name = ?`, name).Scan(&v)
	})
	if err != nil {
		return "", fmt.Errorf("server key %s: %w", name, err)
	}
	return v, nil
}
