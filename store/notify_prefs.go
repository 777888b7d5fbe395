package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/parley-chat/parley/domain"
)

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
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "user "+strconv.FormatInt(userID, 10)); err != nil {
			return err
		}
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
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "server key "+name); err != nil {
			return err
		}
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
