package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/parley-chat/parley/domain"
)

// SessionLimits bound a session: it ends after Idle without a request, and after Max
// whatever happens.
type SessionLimits struct {
	Idle, Max time.Duration
}

// touchEvery is how stale a session's last-seen time may be before a request writes it, at
// most: no write per request, and never more than a tenth of the idle limit stale, so that a
// session in use ends no sooner than nine tenths of the limit after its last request,
// however short the limit.
const touchEvery = time.Minute

// ends is when a session created then and last seen at seen ends: its idle limit past seen,
// or its age limit, whichever comes first. It is live until then, and ended after.
func (lim SessionLimits) ends(created, seen time.Time) time.Time {
	idle, old := seen.Add(lim.Idle), created.Add(lim.Max)
	if old.Before(idle) {
		return old
	}
	return idle
}

func touchAfter(lim SessionLimits) time.Duration { return min(touchEvery, lim.Idle/10) }

// hashToken is how a session id is stored: only the cookie holds the id itself, so a copy
// of the database lets nobody in.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateSession starts a session for the user and returns its id, for the cookie. Expired
// sessions are swept on the way.
func (db *DB) CreateSession(ctx context.Context, userID int64, lim SessionLimits) (string, error) {
	return db.CreateSessionWith(ctx, userID, lim, "")
}

// CreateSessionWith is CreateSession for a sign-in through an identity provider: the session
// keeps the provider's ID token, which signing out hands back to it (SessionIDToken).
func (db *DB) CreateSessionWith(ctx context.Context, userID int64, lim SessionLimits, idToken string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	now := db.Now()
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "user "+strconv.FormatInt(userID, 10)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE last_seen_at < ? OR created_at < ?`,
			formatTime(now.Add(-lim.Idle)), formatTime(now.Add(-lim.Max))); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at, id_token) VALUES (?, ?, ?, ?, ?)`,
			hashToken(token), userID, formatTime(now), formatTime(now), idToken)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return token, nil
}

type peekKey struct{}

// Peek marks ctx as a check that the person is not doing anything (an open page's stream
// asking whether its session still holds): Session then does not count it as activity.
func Peek(ctx context.Context) context.Context { return context.WithValue(ctx, peekKey{}, true) }

// Peeking reports whether ctx is such a check (see Peek).
func Peeking(ctx context.Context) bool { return ctx.Value(peekKey{}) != nil }

// Session returns the user of a live session. A session idle for longer than lim.Idle or
// older than lim.Max is ended; it, and an unknown id, give an EUNAUTHORIZED error.
func (db *DB) Session(ctx context.Context, token string, lim SessionLimits) (domain.User, error) {
	u, _, err := db.SessionUntil(ctx, token, lim)
	return u, err
}

// SessionUntil is Session, and when the session ends unless its person does something first:
// its idle limit past its last-seen time, or its age limit, whichever comes first.
func (db *DB) SessionUntil(ctx context.Context, token string, lim SessionLimits) (domain.User, time.Time, error) {
	if token == "" {
		return domain.User{}, time.Time{}, domain.ErrSignIn
	}
	id := hashToken(token)
	var userID int64
	var created, seen string
	err := db.read.QueryRowContext(ctx, `SELECT user_id, created_at, last_seen_at FROM sessions WHERE id_hash = ?`, id).Scan(&userID, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.User{}, time.Time{}, domain.ErrSignIn
	}
	if err != nil {
		return domain.User{}, time.Time{}, fmt.Errorf("session: %w", err)
	}
	now := db.Now()
	lastSeen := parseTime(seen)
	ends := lim.ends(parseTime(created), lastSeen)
	if now.After(ends) {
		// Ended whether or not the row goes now: the same check refuses it next time.
		_ = db.DeleteSession(ctx, token)
		return domain.User{}, time.Time{}, domain.Errorf(domain.EUNAUTHORIZED, "Your session has ended: sign in again.")
	}
	if now.Sub(lastSeen) >= touchAfter(lim) && ctx.Value(peekKey{}) == nil {
		db.touch(ctx, `UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?`, formatTime(now), id)
	}
	u, err := db.User(ctx, userID)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return u, time.Time{}, domain.ErrSignIn
	}
	return u, ends, err
}

// SessionIDToken is the provider's ID token the session was signed in with ("" when it
// was not, or there is no such session).
func (db *DB) SessionIDToken(ctx context.Context, token string) (string, error) {
	var idToken string
	err := db.read.QueryRowContext(ctx, `SELECT id_token FROM sessions WHERE id_hash = ?`, hashToken(token)).Scan(&idToken)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return idToken, err
}

// DeleteSession ends a session (logout); an unknown one is no error.
func (db *DB) DeleteSession(ctx context.Context, token string) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, hashToken(token))
		return err
	})
}

// touch writes a last-seen or last-used time, as best it can: nobody is refused because it
// could not be written (a full disk, which Writable reports). A session's then ends at most a
// tenth of its idle limit early.
func (db *DB) touch(ctx context.Context, query string, args ...any) {
	_ = db.exec(ctx, query, args...)
}

// AuthChanges is a count that moves whenever a session ends, a password or a role changes,
// an account or access token is deleted, or an A2A client is revoked, in this process or
// another. Open streams are checked again when it moves.
func (db *DB) AuthChanges(ctx context.Context) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT n FROM auth_changes`).Scan(&n)
	return n, err
}
