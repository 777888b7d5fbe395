package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// LoginFor is how long a sign-in sent to the identity provider may take to come back.
const LoginFor = 10 * time.Minute

// PendingLogin is a sign-in sent to the identity provider: what its callback checks (the
// browser that started it, its nonce) and needs (the PKCE verifier, where to go after).
type PendingLogin struct {
	State, Browser  string
	Nonce, Verifier string
	Next            string
}

// StartLogin records a sign-in sent to the provider (only hashes of its state and browser),
// and sweeps those older than LoginFor.
func (db *DB) StartLogin(ctx context.Context, l PendingLogin) error {
	now := db.Now()
	return db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM oidc_logins WHERE created_at < ?`, formatTime(now.Add(-LoginFor))); err != nil {
			return fmt.Errorf("start sign-in: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO oidc_logins (state_hash, browser_hash, nonce, verifier, next, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			hashToken(l.State), hashToken(l.Browser), l.Nonce, l.Verifier, l.Next, formatTime(now)); err != nil {
			return fmt.Errorf("start sign-in: %w", err)
		}
		return nil
	})
}

// TakeLogin returns the sign-in of that state and takes it away, so that it is used once:
// ENOTFOUND when Parley did not start it, it was used already, it is older than LoginFor,
// or another browser started it.
func (db *DB) TakeLogin(ctx context.Context, state, browser string) (PendingLogin, error) {
	l := PendingLogin{State: state, Browser: browser}
	err := db.tx(ctx, func(tx *Tx) error {
		var browserHash, created string
		err := tx.QueryRowContext(ctx, `DELETE FROM oidc_logins WHERE state_hash = ? RETURNING browser_hash, nonce, verifier, next, created_at`, hashToken(state)).
			Scan(&browserHash, &l.Nonce, &l.Verifier, &l.Next, &created)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return domain.Errorf(domain.ENOTFOUND, "Parley did not start this sign-in, or it was used already.")
		case err != nil:
			return fmt.Errorf("take sign-in: %w", err)
		case browserHash != hashToken(browser):
			return domain.Errorf(domain.ENOTFOUND, "This sign-in was started in another browser.")
		case db.Now().Sub(parseTime(created)) > LoginFor:
			return domain.Errorf(domain.ENOTFOUND, "This sign-in took longer than %s: start again.", LoginFor)
		}
		return nil
	})
	return l, err
}

// SignInIdentity finds the account an identity provider vouches for by its issuer and
// subject, making it the first time (named id.Name, a person's account, never staff by being
// first; a name taken or like one taken is an ECONFLICT, and no account is made), and
// applies what the provider says: the role when id.Staff is set, the person's groups of
// source when id.Groups is not nil. The sign-in and each change are in the audit log.
func (db *DB) SignInIdentity(ctx context.Context, id domain.Identity, source string) (domain.SignIn, error) {
	var in domain.SignIn
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "accounts"); err != nil {
			return err
		}
		if err := tx.lockName(ctx, "groups"); err != nil { // a sign-in syncs its groups
			return err
		}
		in = domain.SignIn{}
		now := formatTime(db.Now())
		var userID int64
		err := tx.QueryRowContext(ctx, `SELECT user_id FROM user_identities WHERE issuer = ? AND subject = ?`, id.Issuer, id.Subject).Scan(&userID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			in.User, err = db.createUser(ctx, tx, id.Name, "", domain.RoleUser)
			if err != nil {
				return err
			}
			in.Created, userID = true, in.User.ID
			if _, err := tx.ExecContext(ctx, `INSERT INTO user_identities (issuer, subject, user_id, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)`,
				id.Issuer, id.Subject, userID, now, now); err != nil {
				return fmt.Errorf("sign in: %w", err)
			}
			if err := db.audit(ctx, tx, in.User.Name, "make account", 0, fmt.Sprintf("signed in through %s as %s", id.Issuer, id.Subject)); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("sign in: %w", err)
		default:
			if in.User, _, err = userBy(ctx, tx, `id = ?`, userID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE user_identities SET last_seen_at = ? WHERE issuer = ? AND subject = ?`, now, id.Issuer, id.Subject); err != nil {
				return fmt.Errorf("sign in: %w", err)
			}
		}
		if in.User.Role == domain.RoleService {
			return domain.Errorf(domain.EFORBIDDEN, "%q is one of Parley's own accounts; nobody signs in as it.", in.User.Name)
		}
		if id.Staff != nil {
			role := domain.RoleUser
			if *id.Staff {
				role = domain.RoleStaff
			}
			if role != in.User.Role {
				if _, err := tx.ExecContext(ctx, `UPDATE users SET role = ? WHERE id = ?`, role, userID); err != nil {
					return fmt.Errorf("sign in: %w", err)
				}
				in.User.Role, in.Role = role, role
				if err := db.audit(ctx, tx, "parley", "set-role", 0, fmt.Sprintf("%s is now %s, as %s says (staff group)", in.User.Name, role, id.Issuer)); err != nil {
					return err
				}
			}
		}
		if id.Groups != nil {
			if in.Joined, in.Left, err = db.syncGroups(ctx, tx, in.User, source, id.Groups, id.Issuer); err != nil {
				return err
			}
		}
		return db.audit(ctx, tx, in.User.Name, "sign in", 0, fmt.Sprintf("%s: issuer %s, subject %s", source, id.Issuer, id.Subject))
	})
	return in, err
}

// SyncGroups makes the person's memberships of source exactly the groups named (made as
// groups of source where they do not exist): the groups a sign-in proxy says they are in.
// What staff gave them (a membership, or a group's asker role) is left as it is. It returns the groups joined and left; each is in the
// audit log, as from who.
func (db *DB) SyncGroups(ctx context.Context, userID int64, source string, groups []string, who string) (joined, left []string, err error) {
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "groups"); err != nil {
			return err
		}
		u, _, err := userBy(ctx, tx, `id = ?`, userID)
		if err != nil {
			return err
		}
		joined, left, err = db.syncGroups(ctx, tx, u, source, groups, who)
		return err
	})
	return joined, left, err
}

func (db *DB) syncGroups(ctx context.Context, tx *Tx, u domain.User, source string, groups []string, who string) (joined, left []string, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT g.id, g.name, m.source, m.role FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = ?`, u.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("sync groups: %w", err)
	}
	type membership struct {
		id                 int64
		name, source, role string
	}
	var have []membership
	for rows.Next() {
		var m membership
		if err := rows.Scan(&m.id, &m.name, &m.source, &m.role); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("sync groups: %w", err)
		}
		have = append(have, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("sync groups: %w", err)
	}
	named := func(name string) bool {
		return slices.ContainsFunc(groups, func(g string) bool { return strings.EqualFold(g, name) })
	}
	for _, m := range have {
		if m.source != source || m.role != string(domain.RoleMember) || named(m.name) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ? AND user_id = ?`, m.id, u.ID); err != nil {
			return nil, nil, fmt.Errorf("sync groups: %w", err)
		}
		left = append(left, m.name)
		if err := db.audit(ctx, tx, who, "leave group", 0, fmt.Sprintf("%s: %s (%s)", m.name, u.Name, source)); err != nil {
			return nil, nil, err
		}
	}
	now := formatTime(db.Now())
	for _, name := range groups {
		if slices.ContainsFunc(have, func(m membership) bool { return strings.EqualFold(m.name, name) }) {
			continue // in it already: by this source, or by staff's hand (left as staff made it)
		}
		id, err := groupID(ctx, tx, name)
		if domain.ErrorCode(err) == domain.ENOTFOUND {
			if id, err = insertID(ctx, tx, `INSERT INTO groups (name, created_at, source) VALUES (?, ?, ?)`, name, now, source); err != nil {
				return nil, nil, fmt.Errorf("sync groups: %w", err)
			}
			if err := db.audit(ctx, tx, who, "add group", 0, fmt.Sprintf("%s (%s)", name, source)); err != nil {
				return nil, nil, err
			}
		} else if err != nil {
			return nil, nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id, role, source) VALUES (?, ?, 'member', ?)`, id, u.ID, source); err != nil {
			return nil, nil, fmt.Errorf("sync groups: %w", err)
		}
		joined = append(joined, name)
		if err := db.audit(ctx, tx, who, "join group", 0, fmt.Sprintf("%s: %s (%s)", name, u.Name, source)); err != nil {
			return nil, nil, err
		}
	}
	return joined, left, nil
}
