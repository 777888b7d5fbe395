package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parley-chat/parley/domain"
)

// TokenPrefix begins every personal access token, so that a leaked one is recognised (by a
// secret scanner, by a person reading a log) for what it is.
const TokenPrefix = "parley_"

// Token is one of a person's personal access tokens, as listed: never the token itself,
// which only its maker sees, once.
type Token struct {
	ID       int64
	UserID   int64
	Name     string
	Created  time.Time
	LastUsed time.Time // zero until first used
}

// Via is how an answer given with the token names it ("token laptop").
func (t Token) Via() string { return "token " + t.Name }

// CheckTokenName reports what is wrong with a token's name: it is the person's label for
// where the token lives ("laptop", "ci-nightly").
func CheckTokenName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return domain.Errorf(domain.EINVALID, "Give the token a name, such as laptop or ci-nightly.")
	case utf8.RuneCountInString(name) > domain.NameText.MaxRunes:
		return domain.Errorf(domain.EINVALID, "A token's name is at most %d characters.", domain.NameText.MaxRunes)
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || domain.IsBidiControl(r) }) || name != strings.TrimSpace(name):
		// A name is typed again to revoke its token: refused rather than silently changed.
		return domain.Errorf(domain.EINVALID, "A token's name has no control characters, no invisible direction marks (such as U+202E) and no spaces at either end.")
	case !utf8.ValidString(name):
		return domain.Errorf(domain.EINVALID, "A token's name must be text (valid UTF-8).")
	}
	return nil
}

// CreateToken makes a personal access token for the user and returns it (the only time
// it is seen) with its record. A name the user has already given a token gives ECONFLICT.
// Service accounts get none.
func (db *DB) CreateToken(ctx context.Context, userID int64, name string) (string, Token, error) {
	if err := CheckTokenName(name); err != nil {
		return "", Token{}, err
	}
	u, err := db.User(ctx, userID)
	if err != nil {
		return "", Token{}, err
	}
	if u.Role == domain.RoleService {
		return "", Token{}, domain.Errorf(domain.EINVALID, "%q is one of Parley's own accounts; it has no tokens.", u.Name)
	}
	secret, err := newSecret(TokenPrefix)
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	t := Token{UserID: userID, Name: name, Created: db.Now()}
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "user "+strconv.FormatInt(userID, 10)); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM api_tokens WHERE user_id = ? AND name = ?`, userID, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return domain.Errorf(domain.ECONFLICT, "You already have a token named %q: revoke it first, or choose another name.", name)
		}
		t.ID, err = insertID(ctx, tx, `INSERT INTO api_tokens (user_id, name, hash, created_at) VALUES (?, ?, ?, ?)`,
			userID, name, hashToken(secret), formatTime(t.Created))
		if err != nil {
			return err
		}
		return db.audit(ctx, tx, u.Name, "create token", 0, name)
	})
	if err != nil {
		if domain.ErrorCode(err) != "" {
			return "", Token{}, err
		}
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	return secret, t, nil
}

// tokenColumns are the columns of api_tokens a Token is read from, in scanToken's order.
const tokenColumns = `id, user_id, name, created_at, last_used_at`

// scanToken reads a row of tokenColumns; a token not yet used has the zero LastUsed.
func scanToken(row interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var created, used string
	err := row.Scan(&t.ID, &t.UserID, &t.Name, &created, &used)
	t.Created, t.LastUsed = parseTime(created), parseTime(used)
	return t, err
}

// newSecret is a new bearer token: prefix, then 32 random bytes in base64url.
func newSecret(prefix string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Tokens lists the user's tokens, newest first.
func (db *DB) Tokens(ctx context.Context, userID int64) ([]Token, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE user_id = ? ORDER BY id DESC`, userID)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken deletes the user's token of that name: requests with it are refused from then
// on. An unknown name gives ENOTFOUND.
func (db *DB) RevokeToken(ctx context.Context, userID int64, name string) (Token, error) {
	var t Token
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "user "+strconv.FormatInt(userID, 10)); err != nil {
			return err
		}
		var created, used, actor string
		err := tx.QueryRowContext(ctx, `SELECT t.id, t.created_at, t.last_used_at, u.name FROM api_tokens t JOIN users u ON u.id = t.user_id
			WHERE t.user_id = ? AND t.name = ?`, userID, name).Scan(&t.ID, &created, &used, &actor)
		if errors.Is(err, sql.ErrNoRows) {
			return domain.Errorf(domain.ENOTFOUND, "There is no token named %q.", name)
		}
		if err != nil {
			return err
		}
		t.UserID, t.Name, t.Created = userID, name, parseTime(created)
		if _, err := tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE id = ?`, t.ID); err != nil {
			return err
		}
		return db.audit(ctx, tx, actor, "revoke token", 0, name)
	})
	if err != nil && domain.ErrorCode(err) == "" {
		err = fmt.Errorf("revoke token: %w", err)
	}
	return t, err
}

// TokenUser returns the person a token acts for, with the token's record. An unknown (or
// revoked) token gives EUNAUTHORIZED. The last-used time is written at most once a minute.
func (db *DB) TokenUser(ctx context.Context, secret string) (domain.User, Token, error) {
	if !strings.HasPrefix(secret, TokenPrefix) {
		return domain.User{}, Token{}, domain.Errorf(domain.EUNAUTHORIZED, "That is not a Parley access token.")
	}
	t, err := scanToken(db.read.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = ?`, hashToken(secret)))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.User{}, Token{}, domain.Errorf(domain.EUNAUTHORIZED, "The access token is not valid: it was revoked, or mistyped.")
	}
	if err != nil {
		return domain.User{}, Token{}, fmt.Errorf("token: %w", err)
	}
	now := db.Now()
	if now.Sub(t.LastUsed) >= touchEvery && ctx.Value(peekKey{}) == nil {
		db.touch(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, formatTime(now), t.ID)
		t.LastUsed = now
	}
	u, err := db.User(ctx, t.UserID)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return u, Token{}, domain.Errorf(domain.EUNAUTHORIZED, "The access token is not valid.")
	}
	return u, t, err
}
