package store

import (
	"context"
	"database/sql"
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
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "channels"); err != nil {
			return err
		}
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
	token, err := newSecret("")
	if err != nil {
		return domain.Channel{}, "", fmt.Errorf("confirm token: %w", err)
	}
	var ch domain.Channel
	err = db.tx(ctx, func(tx *Tx) error {
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
	err := db.tx(ctx, func(tx *Tx) error {
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
	return db.tx(ctx, func(tx *Tx) error {
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
	return db.tx(ctx, func(tx *Tx) error {
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
	return db.tx(ctx, func(tx *Tx) error {
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
