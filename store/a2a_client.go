package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// A2AClientPrefix begins every A2A client's token, so that a leaked one is recognised.
const A2AClientPrefix = "parley_a2a_"

// LegacyActor is who the audit log says made the client of PARLEY_A2A_TOKEN.
const LegacyActor = "parley serve (PARLEY_A2A_TOKEN)"

const a2aClientColumns = `id, name, created_at, last_used_at, revoked_at`

// CreateA2AClient makes an A2A client with a token of its own and returns the token (the only
// time it is seen) with the client. A name another client has (not revoked) gives ECONFLICT;
// actor is who the audit log says made it.
func (db *DB) CreateA2AClient(ctx context.Context, name, actor string) (string, domain.A2AClient, error) {
	if err := CheckTokenName(name); err != nil {
		return "", domain.A2AClient{}, err
	}
	if name == domain.LegacyA2AClient {
		return "", domain.A2AClient{}, domain.Errorf(domain.EINVALID,
			"%q is the client of the shared token PARLEY_A2A_TOKEN; choose another name.", name)
	}
	secret, err := newSecret(A2AClientPrefix)
	if err != nil {
		return "", domain.A2AClient{}, fmt.Errorf("create a2a client: %w", err)
	}
	var c domain.A2AClient
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "a2a clients"); err != nil {
			return err
		}
		c, err = db.insertA2AClient(ctx, tx, name, hashToken(secret), actor)
		return err
	})
	if err != nil && domain.ErrorCode(err) == "" {
		err = fmt.Errorf("create a2a client: %w", err)
	}
	if err != nil {
		return "", domain.A2AClient{}, err
	}
	return secret, c, nil
}

// insertA2AClient adds a client with the token of that hash, audited.
func (db *DB) insertA2AClient(ctx context.Context, tx *Tx, name, hash, actor string) (domain.A2AClient, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM a2a_clients WHERE name = ? AND revoked_at = ''`, name).Scan(&n); err != nil {
		return domain.A2AClient{}, err
	}
	if n > 0 {
		return domain.A2AClient{}, domain.Errorf(domain.ECONFLICT, "There is already an A2A client named %q: revoke it first, or choose another name.", name)
	}
	c := domain.A2AClient{Name: name, Created: db.Now()}
	var err error
	if c.ID, err = insertID(ctx, tx, `INSERT INTO a2a_clients (name, hash, created_at) VALUES (?, ?, ?)`, name, hash, formatTime(c.Created)); err != nil {
		return c, err
	}
	return c, db.audit(ctx, tx, actor, "add a2a client", 0, name)
}

// A2AClients lists the A2A clients, revoked ones too, newest first.
func (db *DB) A2AClients(ctx context.Context) ([]domain.A2AClient, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+a2aClientColumns+` FROM a2a_clients ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("a2a clients: %w", err)
	}
	defer rows.Close()
	var out []domain.A2AClient
	for rows.Next() {
		c, err := scanA2AClient(rows)
		if err != nil {
			return nil, fmt.Errorf("a2a clients: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// A2AClient returns the client of that id, revoked or not; an unknown id gives ENOTFOUND.
// An open request reads its client again when auth_changes moves: a revoke ends it.
func (db *DB) A2AClient(ctx context.Context, id int64) (domain.A2AClient, error) {
	c, err := scanA2AClient(db.read.QueryRowContext(ctx, `SELECT `+a2aClientColumns+` FROM a2a_clients WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, domain.Errorf(domain.ENOTFOUND, "There is no A2A client %d.", id)
	}
	if err != nil {
		return c, fmt.Errorf("a2a client %d: %w", id, err)
	}
	return c, nil
}

// RevokeA2AClient revokes the client of that name: its token is refused from then on, and
// its open streams end within a second, in whichever process serves them (auth_changes). Its tasks stay its own, readable by nobody
// over A2A. An unknown name gives ENOTFOUND.
func (db *DB) RevokeA2AClient(ctx context.Context, name, actor string) (domain.A2AClient, error) {
	var c domain.A2AClient
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "a2a clients"); err != nil {
			return err
		}
		var err error
		c, err = scanA2AClient(tx.QueryRowContext(ctx, `SELECT `+a2aClientColumns+` FROM a2a_clients WHERE name = ? AND revoked_at = ''`, name))
		if errors.Is(err, sql.ErrNoRows) {
			return domain.Errorf(domain.ENOTFOUND, "There is no A2A client named %q.", name)
		}
		if err != nil {
			return err
		}
		c.Revoked = db.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE a2a_clients SET revoked_at = ? WHERE id = ?`, formatTime(c.Revoked), c.ID); err != nil {
			return err
		}
		return db.audit(ctx, tx, actor, "revoke a2a client", 0, name)
	})
	if err != nil && domain.ErrorCode(err) == "" {
		err = fmt.Errorf("revoke a2a client: %w", err)
	}
	return c, err
}

// A2AClientByToken returns the client whose token secret is. An unknown token, or a revoked
// client's, gives EUNAUTHORIZED. The last-used time is written at most once a minute.
func (db *DB) A2AClientByToken(ctx context.Context, secret string) (domain.A2AClient, error) {
	c, err := scanA2AClient(db.read.QueryRowContext(ctx, `SELECT `+a2aClientColumns+` FROM a2a_clients WHERE hash = ?`, hashToken(secret)))
	if errors.Is(err, sql.ErrNoRows) {
		return c, domain.Errorf(domain.EUNAUTHORIZED, "The token is not valid: it was mistyped, or never made (parley a2a-client add NAME makes one).")
	}
	if err != nil {
		return c, fmt.Errorf("a2a client: %w", err)
	}
	if !c.Revoked.IsZero() {
		return domain.A2AClient{}, domain.Errorf(domain.EUNAUTHORIZED, "The token of the A2A client %q was revoked.", c.Name)
	}
	if now := db.Now(); now.Sub(c.LastUsed) >= touchEvery {
		db.touch(ctx, `UPDATE a2a_clients SET last_used_at = ? WHERE id = ?`, formatTime(now), c.ID)
		c.LastUsed = now
	}
	return c, nil
}

// LegacyA2AClient returns the client of the old shared token (PARLEY_A2A_TOKEN), named
// domain.LegacyA2AClient. The first time, it is made, and takes the tasks made before clients
// had tokens of their own; a new value of the shared token replaces the old one. Once the
// client is revoked, the shared token is refused (EINVALID) rather than made a new client.
func (db *DB) LegacyA2AClient(ctx context.Context, secret string) (domain.A2AClient, error) {
	name, hash := domain.LegacyA2AClient, hashToken(secret)
	var c domain.A2AClient
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "a2a clients"); err != nil {
			return err
		}
		var other string
		err := tx.QueryRowContext(ctx, `SELECT name FROM a2a_clients WHERE hash = ? AND name != ?`, hash, name).Scan(&other)
		if err == nil {
			return domain.Errorf(domain.EINVALID, "PARLEY_A2A_TOKEN is the token of the A2A client %q: unset it, or give it a value of its own.", other)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var old string
		c, err = scanA2AClient(tx.QueryRowContext(ctx, `SELECT `+a2aClientColumns+`, hash FROM a2a_clients WHERE name = ? ORDER BY id DESC LIMIT 1`, name), &old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if c, err = db.insertA2AClient(ctx, tx, name, hash, LegacyActor); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE a2a_tasks SET client_id = ? WHERE client_id IS NULL`, c.ID)
			return err
		case err != nil:
			return err
		case !c.Revoked.IsZero():
			return domain.Errorf(domain.EINVALID, "PARLEY_A2A_TOKEN is the token of the A2A client %q, which was revoked on %s: "+
				"unset PARLEY_A2A_TOKEN, and give each client a token of its own (parley a2a-client add NAME).", name, c.Revoked.Format("2006-01-02"))
		case old != hash:
			if _, err := tx.ExecContext(ctx, `UPDATE a2a_clients SET hash = ? WHERE id = ?`, hash, c.ID); err != nil {
				return err
			}
			return db.audit(ctx, tx, LegacyActor, "new token for a2a client", 0, name)
		}
		return nil
	})
	if err != nil && domain.ErrorCode(err) == "" {
		err = fmt.Errorf("a2a client %s: %w", name, err)
	}
	return c, err
}

// scanA2AClient reads a row of a2aClientColumns, then the columns into more.
func scanA2AClient(row interface{ Scan(...any) error }, more ...any) (domain.A2AClient, error) {
	var c domain.A2AClient
	var created, used, revoked string
	err := row.Scan(append([]any{&c.ID, &c.Name, &created, &used, &revoked}, more...)...)
	c.Created, c.LastUsed, c.Revoked = parseTime(created), parseTime(used), parseTime(revoked)
	return c, err
}
