package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// AddToGroup puts people in a group, made if it is new, as role (a person there already
// takes the role). Staff (actor) do it; the audit log keeps it.
func (db *DB) AddToGroup(ctx context.Context, group string, people []string, role domain.GroupRole, actor string) (domain.Group, error) {
	name, err := domain.GroupName(group)
	if err != nil {
		return domain.Group{}, err
	}
	if role != domain.RoleMember && role != domain.RoleAsker {
		return domain.Group{}, domain.Errorf(domain.EINVALID, "A group's people are members or askers, not %q.", role)
	}
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "groups"); err != nil {
			return err
		}
		id, err := groupID(ctx, tx, name)
		if domain.ErrorCode(err) == domain.ENOTFOUND {
			if id, err = insertID(ctx, tx, `INSERT INTO groups (name, created_at) VALUES (?, ?)`, name, formatTime(db.Now())); err != nil {
				return fmt.Errorf("add group: %w", err)
			}
			if err := db.audit(ctx, tx, actor, "add group", 0, name); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		for _, p := range people {
			var uid int64
			err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE name = ? AND role <> ?`, strings.TrimSpace(p), domain.RoleService).Scan(&uid)
			if errors.Is(err, sql.ErrNoRows) {
				return domain.NoPerson(p)
			}
			if err != nil {
				return fmt.Errorf("add to group: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id, role) VALUES (?, ?, ?)
				ON CONFLICT (group_id, user_id) DO UPDATE SET role = excluded.role`, id, uid, role); err != nil {
				return fmt.Errorf("add to group: %w", err)
			}
			if err := db.audit(ctx, tx, actor, "add to group", 0, fmt.Sprintf("%s: %s as %s", name, p, role)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return domain.Group{}, err
	}
	return db.Group(ctx, name)
}

// RemoveFromGroup takes people out of a group; with nobody named, it deletes the group, and
// its questions still waiting are cancelled (their askers are told so).
func (db *DB) RemoveFromGroup(ctx context.Context, group string, people []string, actor string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockName(ctx, "groups"); err != nil {
			return err
		}
		id, err := groupID(ctx, tx, group)
		if err != nil {
			return err
		}
		if len(people) == 0 {
			// Its questions still waiting are called off: nobody else may answer them.
			waiting, err := queryColumn[int64](ctx, tx, `SELECT a.question_id FROM question_audience a JOIN questions q ON q.id = a.question_id
				WHERE a.group_id = ? AND a.escalated = 0 AND q.state = 'pending' ORDER BY q.conversation_id, a.question_id`, id)
			if err != nil {
				return fmt.Errorf("delete group: %w", err)
			}
			for _, q := range waiting {
				if _, err := db.resolveAndResume(ctx, tx, domain.Resolution{QuestionID: q, Outcome: domain.Cancelled, By: actor,
					Reason: fmt.Sprintf("The group %s was deleted.", group)}); err != nil && domain.ErrorCode(err) != domain.ECONFLICT {
					return err // (one answered meanwhile is no longer waiting)
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM groups WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete group: %w", err)
			}
			return db.audit(ctx, tx, actor, "delete group", 0, group)
		}
		for _, p := range people {
			res, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ? AND user_id = (SELECT id FROM users WHERE name = ?)`, id, strings.TrimSpace(p))
			if err != nil {
				return fmt.Errorf("remove from group: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return domain.Errorf(domain.ENOTFOUND, "%q is not in the group %s.", p, group)
			}
			if err := db.audit(ctx, tx, actor, "remove from group", 0, fmt.Sprintf("%s: %s", group, p)); err != nil {
				return err
			}
		}
		return nil
	})
}

func groupID(ctx context.Context, q queryer, name string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM groups WHERE name = ? COLLATE NOCASE`, strings.TrimSpace(name)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, domain.NoGroup(name)
	}
	if err != nil {
		return 0, fmt.Errorf("group %q: %w", name, err)
	}
	return id, nil
}

// Group returns a group with its people, by name (any case), or ENOTFOUND.
func (db *DB) Group(ctx context.Context, name string) (domain.Group, error) {
	id, err := groupID(ctx, db.read, name)
	if err != nil {
		return domain.Group{}, err
	}
	gs, err := db.groups(ctx, `WHERE g.id = ?`, id)
	if err != nil || len(gs) == 0 {
		return domain.Group{}, cmpErr(err, domain.NoGroup(name))
	}
	return gs[0], nil
}

// GroupExists reports whether there is a group of that name, letter case aside.
func (db *DB) GroupExists(ctx context.Context, name string) (bool, error) {
	_, err := groupID(ctx, db.read, name)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return false, nil
	}
	return err == nil, err
}

// Groups returns every group with its people, by name.
func (db *DB) Groups(ctx context.Context) ([]domain.Group, error) { return db.groups(ctx, "") }

// GroupsOf returns the groups a person is in (as member or asker), by name.
func (db *DB) GroupsOf(ctx context.Context, userID int64) ([]domain.Group, error) {
	return db.groups(ctx, `WHERE g.id IN (SELECT group_id FROM group_members WHERE user_id = ?)`, userID)
}

// MemberGroups names the groups a person is a member of (whose questions they answer, whose
// agents they may use; an asker's are not), by name.
func (db *DB) MemberGroups(ctx context.Context, userID int64) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT g.name FROM group_members m JOIN groups g ON g.id = m.group_id
		WHERE m.user_id = ? AND m.role = 'member' ORDER BY g.name COLLATE NOCASE, g.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("groups of %d: %w", userID, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("groups of %d: %w", userID, err)
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

func (db *DB) groups(ctx context.Context, where string, args ...any) ([]domain.Group, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT g.id, g.name, g.source, coalesce(u.id, 0), coalesce(u.name, ''), coalesce(m.role, ''), coalesce(m.source, '')
		FROM groups g LEFT JOIN group_members m ON m.group_id = g.id LEFT JOIN users u ON u.id = m.user_id `+where+`
		ORDER BY g.name COLLATE NOCASE, g.id, u.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("groups: %w", err)
	}
	defer rows.Close()
	var out []domain.Group
	for rows.Next() {
		var g domain.Group
		var m domain.GroupMember
		if err := rows.Scan(&g.ID, &g.Name, &g.Source, &m.UserID, &m.Name, &m.Role, &m.Source); err != nil {
			return nil, fmt.Errorf("groups: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].ID != g.ID {
			out = append(out, g)
		}
		if m.UserID != 0 {
			last := &out[len(out)-1]
			last.Members = append(last.Members, m)
		}
	}
	return out, rows.Err()
}

// cmpErr is err, or other when err is nil.
func cmpErr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}
