package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// CreateUser makes an account. With role "" the first person's account (service accounts
// aside) becomes staff and every later one a user. The first person's account also adopts
// the conversations from before accounts existed. A name already taken, in any letter
// case, gives an ECONFLICT error.
func (db *DB) CreateUser(ctx context.Context, name, passwordHash string, role domain.Role) (domain.User, error) {
	var u domain.User
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "accounts"); err != nil {
			return err
		}
		var err error
		u, err = db.createUser(ctx, tx, name, passwordHash, role)
		return err
	})
	return u, err
}

func (db *DB) createUser(ctx context.Context, tx *Tx, name, passwordHash string, role domain.Role) (domain.User, error) {
	if err := domain.CheckUserName(name); err != nil {
		return domain.User{}, err
	}
	if role != domain.RoleService && domain.NameKey(name) == domain.NameKey(domain.A2AAccount) {
		return domain.User{}, domain.Errorf(domain.EINVALID, "The name %q is Parley's own; choose another.", name)
	}
	var people int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role <> 'service'`).Scan(&people); err != nil {
		return domain.User{}, fmt.Errorf("create user: %w", err)
	}
	if role == "" {
		role = domain.RoleUser
		if people == 0 {
			role = domain.RoleStaff
		}
	}
	if err := fillNameKeys(ctx, tx); err != nil {
		return domain.User{}, err
	}
	key := domain.NameKey(name)
	var other string
	err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE name = ? OR name_key = ? ORDER BY name = ? DESC LIMIT 1`, name, key, name).Scan(&other)
	switch {
	case err == nil && strings.EqualFold(other, name):
		return domain.User{}, domain.Errorf(domain.ECONFLICT, "The user name %q is taken.", name)
	case err == nil:
		return domain.User{}, domain.Errorf(domain.ECONFLICT, "The user name %q looks too much like %q, which is taken: choose another.", name, other)
	case !errors.Is(err, sql.ErrNoRows):
		return domain.User{}, fmt.Errorf("create user: %w", err)
	}
	now := db.Now()
	id, err := insertID(ctx, tx, `INSERT INTO users (name, name_key, password, role, created_at) VALUES (?, ?, ?, ?, ?)`,
		name, key, passwordHash, role, formatTime(now))
	if err != nil {
		return domain.User{}, fmt.Errorf("create user: %w", err)
	}
	if people == 0 && role != domain.RoleService {
		if _, err := tx.ExecContext(ctx, `UPDATE conversations SET user_id = ? WHERE user_id IS NULL`, id); err != nil {
			return domain.User{}, fmt.Errorf("create user: adopt conversations: %w", err)
		}
	}
	return domain.User{ID: id, Name: name, Role: role, CreatedAt: now}, nil
}

// fillNameKeys gives the accounts made before name keys existed theirs (see migration
// 0012). Of old accounts that already look alike, the first keeps the key and the others
// get it marked with their id, which no name's key can equal: they stay as they are, and no
// new name like theirs is taken.
func fillNameKeys(ctx context.Context, tx *Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, name FROM users WHERE name_key IS NULL ORDER BY id`)
	if err != nil {
		return fmt.Errorf("name keys: %w", err)
	}
	type account struct {
		id   int64
		name string
	}
	var todo []account
	for rows.Next() {
		var a account
		if err := rows.Scan(&a.id, &a.name); err != nil {
			rows.Close()
			return fmt.Errorf("name keys: %w", err)
		}
		todo = append(todo, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("name keys: %w", err)
	}
	for _, a := range todo {
		key := domain.NameKey(a.name)
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE name_key = ?`, key).Scan(&n); err != nil {
			return fmt.Errorf("name keys: %w", err)
		}
		if n > 0 {
			key += fmt.Sprintf("\x00%d", a.id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET name_key = ? WHERE id = ?`, key, a.id); err != nil {
			return fmt.Errorf("name keys: %w", err)
		}
	}
	return nil
}

// EnsureUser returns the account of that name, making it (without a password) when there
// is none: the accounts of people a proxy vouches for, the single person of --auth none,
// and Parley's own service accounts. role "" follows CreateUser's first-account rule.
func (db *DB) EnsureUser(ctx context.Context, name string, role domain.Role) (domain.User, error) {
	// Nearly always the account is there: a read, without the writer's lock.
	u, _, err := userBy(ctx, db.read, `name = ?`, name)
	if domain.ErrorCode(err) != domain.ENOTFOUND {
		return u, err
	}
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "accounts"); err != nil {
			return err
		}
		var err error
		u, _, err = userBy(ctx, tx, `name = ?`, name)
		if domain.ErrorCode(err) == domain.ENOTFOUND {
			u, err = db.createUser(ctx, tx, name, "", role)
		}
		return err
	})
	return u, err
}

const userColumns = `id, name, role, created_at, password, display_name, time_zone`

func userBy(ctx context.Context, q queryer, where string, args ...any) (domain.User, string, error) {
	var u domain.User
	var created, hash string
	err := q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE `+where, args...).Scan(&u.ID, &u.Name, &u.Role, &created, &hash, &u.DisplayName, &u.TimeZone)
	if errors.Is(err, sql.ErrNoRows) {
		return u, "", domain.ErrNoUser
	}
	if err != nil {
		return u, "", fmt.Errorf("user: %w", err)
	}
	u.CreatedAt = parseTime(created)
	return u, hash, nil
}

// User returns an account by id, or an ENOTFOUND error.
func (db *DB) User(ctx context.Context, id int64) (domain.User, error) {
	u, _, err := userBy(ctx, db.read, `id = ?`, id)
	return u, err
}

// UserByName returns an account by name (any letter case) with its password hash, or an
// ENOTFOUND error.
func (db *DB) UserByName(ctx context.Context, name string) (domain.User, string, error) {
	return userBy(ctx, db.read, `name = ?`, name)
}

// Users lists the accounts of people (service accounts aside), by name.
func (db *DB) Users(ctx context.Context) ([]domain.User, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+userColumns+` FROM users WHERE role <> 'service' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	defer rows.Close()
	var out []domain.User
	for rows.Next() {
		var u domain.User
		var created, hash string
		if err := rows.Scan(&u.ID, &u.Name, &u.Role, &created, &hash, &u.DisplayName, &u.TimeZone); err != nil {
			return nil, fmt.Errorf("users: %w", err)
		}
		u.CreatedAt = parseTime(created)
		out = append(out, u)
	}
	return out, rows.Err()
}

// HasPeople reports whether any person has an account yet (service accounts aside).
func (db *DB) HasPeople(ctx context.Context) (bool, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role <> 'service'`).Scan(&n); err != nil {
		return false, fmt.Errorf("has people: %w", err)
	}
	return n > 0, nil
}

// SetRole changes the role of a person's account, and records who did it.
func (db *DB) SetRole(ctx context.Context, name string, role domain.Role, actor string) (domain.User, error) {
	var u domain.User
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "accounts"); err != nil {
			return err
		}
		var err error
		if u, _, err = userBy(ctx, tx, `name = ? AND role <> 'service'`, name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET role = ? WHERE id = ?`, role, u.ID); err != nil {
			return fmt.Errorf("set role: %w", err)
		}
		u.Role = role
		return db.audit(ctx, tx, actor, "set-role", 0, fmt.Sprintf("%s is now %s", u.Name, role))
	})
	return u, err
}

// SetPassword stores a new password hash for a person's account and ends all its sessions.
func (db *DB) SetPassword(ctx context.Context, name, passwordHash, actor string) (domain.User, error) {
	var u domain.User
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "accounts"); err != nil {
			return err
		}
		var err error
		if u, _, err = userBy(ctx, tx, `name = ? AND role <> 'service'`, name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password = ? WHERE id = ?`, passwordHash, u.ID); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, u.ID); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		return db.audit(ctx, tx, actor, "reset-password", 0, u.Name)
	})
	return u, err
}

// SetProfile stores a person's display name and time zone (both may be empty).
func (db *DB) SetProfile(ctx context.Context, id int64, displayName, timeZone string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "user "+strconv.FormatInt(id, 10)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET display_name = ?, time_zone = ? WHERE id = ?`, displayName, timeZone, id)
		if err != nil {
			return fmt.Errorf("set profile: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return domain.ErrNoUser
		}
		return nil
	})
}
