package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// askRouted stores a question an agent asks that goes to others than the conversation's
// owner (an approval gate routed to the agent's approvers, see domain.Policy.Route): it is in
// their Inbox and told to their channels, not the owner's to answer. When they cannot
// answer it (the group or person is gone, or fewer people than the approvals it needs are
// there besides the owner), it is declined at once, saying why, so that the agent is told
// and nothing waits for ever. The routing is in the audit log.
func (db *DB) askRouted(ctx context.Context, tx *Tx, convID, runID int64, q domain.Question) (domain.QuestionRecord, error) {
	var ownerID int64
	var owner string
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(c.user_id, 0), coalesce(u.name, '') FROM conversations c LEFT JOIN users u ON u.id = c.user_id WHERE c.id = ?`, convID).
		Scan(&ownerID, &owner); err != nil {
		return domain.QuestionRecord{}, fmt.Errorf("ask: conversation %d: %w", convID, err)
	}
	to := q.Audience()
	groupID, userID, refusal, err := db.audience(ctx, tx, to, ownerID, max(1, q.Approvals))
	if err != nil {
		return domain.QuestionRecord{}, err
	}
	var escalation string
	if e := q.Escalate; e != nil && e.GroupID == 0 && e.UserID == 0 {
		if q.Escalate, escalation, err = db.escalation(ctx, tx, *e, ownerID); err != nil {
			return domain.QuestionRecord{}, err
		}
	}
	rec, err := db.ask(ctx, tx, convID, runID, q)
	if err != nil {
		return rec, err
	}
	detail := fmt.Sprintf("question %d from %s to %s", rec.ID, q.Asker, to.Words())
	if q.Approvals > 1 {
		detail += fmt.Sprintf(", %d approvals", q.Approvals)
	}
	if escalation != "" {
		detail += "; " + escalation
	}
	if rec.Resolution != nil { // declined at once (see ask): there is nobody to tell
		return rec, db.audit(ctx, tx, "parley", "route approval", convID, detail+": declined at once")
	}
	if refusal != "" {
		r := domain.Resolution{QuestionID: rec.ID, Outcome: domain.Declined, By: "parley", Reason: refusal}
		if err := db.resolve(ctx, tx, convID, runID, r); err != nil {
			return rec, err
		}
		r.At = db.Now()
		rec.Resolution = &r
		return rec, db.audit(ctx, tx, "parley", "route approval", convID, detail+": declined at once, "+refusal)
	}
	if err := db.route(ctx, tx, rec.ID, groupID, userID, true, q.Escalate); err != nil {
		return rec, err
	}
	return rec, db.audit(ctx, tx, "parley", "route approval", convID, detail)
}

// audience finds the group or the person a routed question is for, and says why they cannot
// answer it, if so: gone, or fewer than need people besides the owner.
func (db *DB) audience(ctx context.Context, tx *Tx, to domain.Audience, ownerID int64, need int) (gid, userID int64, refusal string, err error) {
	if to.Group != "" {
		gid, err = groupID(ctx, tx, to.Group)
		if domain.ErrorCode(err) == domain.ENOTFOUND {
			return 0, 0, fmt.Sprintf("Its approvers, the group %s, do not exist.", to.Group), nil
		}
		if err != nil {
			return 0, 0, "", err
		}
		var others int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM group_members WHERE group_id = ? AND role = 'member' AND user_id <> ?`, gid, ownerID).Scan(&others); err != nil {
			return 0, 0, "", fmt.Errorf("ask: %w", err)
		}
		if others < need {
			return gid, 0, fmt.Sprintf("It needs %d approvals from the group %s, which has %d members besides the person who asked.", need, to.Group, others), nil
		}
		return gid, 0, "", nil
	}
	userID, err = personNamed(ctx, tx, to.Person)
	switch {
	case domain.ErrorCode(err) == domain.ENOTFOUND:
		return 0, 0, fmt.Sprintf("Its approver, %s, has no account.", to.Person), nil
	case err != nil:
		return 0, 0, "", fmt.Errorf("ask: %w", err)
	case userID == ownerID:
		return 0, userID, fmt.Sprintf("Its approver, %s, asked for it: someone else must approve it.", to.Person), nil
	}
	return 0, userID, "", nil
}

// escalation resolves an escalation the operator named ("group:NAME" or "person:NAME") to
// the group or the person; nil when there is none such (the returned words say so, for the
// audit log).
func (db *DB) escalation(ctx context.Context, tx *Tx, e domain.Escalation, ownerID int64) (*domain.Escalation, string, error) {
	to, err := domain.ParseAudience(e.To)
	if err != nil {
		return nil, "no escalation: " + domain.ErrorMessage(err), nil
	}
	if to.Group != "" {
		id, err := groupID(ctx, tx, to.Group)
		if domain.ErrorCode(err) == domain.ENOTFOUND {
			return nil, fmt.Sprintf("no escalation: the group %s does not exist", to.Group), nil
		}
		if err != nil {
			return nil, "", err
		}
		return &domain.Escalation{After: e.After, To: to.Group, GroupID: id}, "", nil
	}
	id, err := personNamed(ctx, tx, to.Person)
	if domain.ErrorCode(err) == domain.ENOTFOUND || err == nil && id == ownerID {
		return nil, fmt.Sprintf("no escalation: %s cannot take it", to.Person), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("ask: escalation: %w", err)
	}
	return &domain.Escalation{After: e.After, To: to.Person, UserID: id}, "", nil
}

// PersonNamed finds the account of a person (not a service's) by a name an operator wrote,
// as an approval routed to a person finds them (see personNamed).
func (db *DB) PersonNamed(ctx context.Context, name string) (int64, error) {
	return personNamed(ctx, db.read, name)
}

// personNamed finds a person's account by a name an operator wrote, letter case aside (any
// script: as access lists compare names), ENOTFOUND when there is none.
func personNamed(ctx context.Context, q queryer, name string) (int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM users WHERE (name = ? OR name_key = ?) AND role <> 'service'`, name, domain.NameKey(name))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n string
		if err := rows.Scan(&id, &n); err != nil {
			return 0, err
		}
		if strings.EqualFold(n, name) {
			return id, nil
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return 0, domain.NoPerson(name)
}
