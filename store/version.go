package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// versionsOf returns a conversation's versions (version 0 always among them) and the one shown.
func versionsOf(ctx context.Context, q queryer, convID int64) (domain.Versions, int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT c.version, v.n, v.parent, v.fork, v.reason, v.created_by, v.created_at, v.chosen_at
		FROM conversations c LEFT JOIN versions v ON v.conversation_id = c.id WHERE c.id = ? ORDER BY v.n`, convID)
	if err != nil {
		return nil, 0, fmt.Errorf("versions: %w", err)
	}
	defer rows.Close()
	var vs domain.Versions
	var shown int64
	found := false
	for rows.Next() {
		found = true
		var n, parent, fork sql.NullInt64
		var reason, by, created, chosen sql.NullString
		if err := rows.Scan(&shown, &n, &parent, &fork, &reason, &by, &created, &chosen); err != nil {
			return nil, 0, fmt.Errorf("versions: %w", err)
		}
		if n.Valid {
			vs = append(vs, domain.Version{N: n.Int64, Parent: parent.Int64, Fork: fork.Int64, Reason: domain.VersionReason(reason.String),
				By: by.String, CreatedAt: parseTime(created.String), ChosenAt: parseTime(chosen.String)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("versions: %w", err)
	}
	if !found {
		return nil, 0, domain.ConversationNotFound(convID)
	}
	if len(vs) == 0 {
		vs = domain.Versions{{N: 0}}
	}
	return vs, shown, nil
}

// Versions returns a conversation's versions and the one shown.
func (db *DB) Versions(ctx context.Context, convID int64) (domain.Versions, int64, error) {
	return versionsOf(ctx, db.read, convID)
}

// VersionEvents returns the events of version n of a conversation with an id above after.
func (db *DB) VersionEvents(ctx context.Context, convID, n, after int64) ([]domain.Event, error) {
	vs, _, err := versionsOf(ctx, db.read, convID)
	if err != nil {
		return nil, err
	}
	if _, ok := vs.Find(n); !ok {
		return nil, domain.NoVersion(convID, n)
	}
	return pathEvents(ctx, db.read, convID, vs.Path(n), after)
}

// PathEvents returns the events of a path of the conversation (see Versions) with an id
// above after.
func (db *DB) PathEvents(ctx context.Context, convID int64, p domain.Path, after int64) ([]domain.Event, error) {
	return pathEvents(ctx, db.read, convID, p, after)
}

// pathWhere is the condition (on events e) that keeps the events of a path.
func pathWhere(p domain.Path) (string, []any) {
	var or []string
	var args []any
	for _, s := range p {
		if s.UpTo == 0 {
			or, args = append(or, `e.version = ?`), append(args, s.Version)
		} else {
			or, args = append(or, `(e.version = ? AND e.id <= ?)`), append(args, s.Version, s.UpTo)
		}
	}
	return `(` + strings.Join(or, ` OR `) + `)`, args
}

// pathEvents returns the events of a path with an id above after, oldest first.
func pathEvents(ctx context.Context, q queryer, convID int64, p domain.Path, after int64) ([]domain.Event, error) {
	on, args := pathWhere(p)
	rows, err := q.QueryContext(ctx, `SELECT e.id, e.conversation_id, coalesce(e.run_id, 0), e.kind, e.payload, e.created_at, e.version FROM events e
		WHERE e.conversation_id = ? AND e.id > ? AND `+on+` ORDER BY e.id`, append([]any{convID, after}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return scanEvents(rows)
}

// scanEvents reads and closes rows of id, conversation_id, run_id, kind, payload,
// created_at and version.
func scanEvents(rows *sql.Rows) ([]domain.Event, error) {
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var ev domain.Event
		var kind, at string
		var payload []byte
		if err := rows.Scan(&ev.ID, &ev.ConversationID, &ev.RunID, &kind, &payload, &at, &ev.Version); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("event %d: %w", ev.ID, err)
		}
		ev.Kind, ev.At = domain.EventKind(kind), parseTime(at)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// branch starts version n+1 of a conversation at fork, shows it, and returns it: the version
// shown before is left as it stands, its questions still waiting closed as superseded and
// a run waiting on them stopped (Retry there asks again).
func (db *DB) branch(ctx context.Context, tx *Tx, c domain.Conversation, vs domain.Versions, shown, fork int64, reason domain.VersionReason, by string) (int64, error) {
	parent := int64(0)
	if fork != 0 {
		if err := tx.QueryRowContext(ctx, `SELECT version FROM events WHERE id = ?`, fork).Scan(&parent); err != nil {
			return 0, fmt.Errorf("branch: %w", err)
		}
	}
	n := int64(0)
	for _, v := range vs {
		n = max(n, v.N)
	}
	n++
	now := formatTime(db.Now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO versions (conversation_id, n, created_at, chosen_at) VALUES (?, 0, ?, ?) ON CONFLICT DO NOTHING`,
		c.ID, formatTime(c.CreatedAt), now); err != nil {
		return 0, fmt.Errorf("branch: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO versions (conversation_id, n, parent, fork, reason, created_by, created_at, chosen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, n, parent, fork, reason, by, now, now); err != nil {
		return 0, fmt.Errorf("branch: %w", err)
	}
	why := "The person regenerated the reply: a new version of the conversation replaced this one."
	if reason == domain.VersionEdit {
		why = "The person edited an earlier message: a new version of the conversation replaced this one."
	}
	return n, db.show(ctx, tx, c, shown, n, reason, by, why)
}

// show makes version n the one the conversation shows, leaving version left (see branch).
func (db *DB) show(ctx context.Context, tx *Tx, c domain.Conversation, left, n int64, reason domain.VersionReason, by, why string) error {
	if err := db.leave(ctx, tx, c, left, by, why); err != nil {
		return err
	}
	now := formatTime(db.Now())
	if _, err := tx.ExecContext(ctx, `UPDATE versions SET chosen_at = ? WHERE conversation_id = ? AND n IN (?, ?)`, now, c.ID, left, n); err != nil {
		return fmt.Errorf("show version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE conversations SET version = ? WHERE id = ?`, n, c.ID); err != nil {
		return fmt.Errorf("show version: %w", err)
	}
	_, err := db.insertEvent(ctx, tx, domain.Event{ConversationID: c.ID, Kind: domain.EventVersion, Shown: n, Reason: reason, Author: by})
	return err
}

// leave closes what still waits in the version left: its questions are superseded, and a
// run waiting for them is stopped.
func (db *DB) leave(ctx context.Context, tx *Tx, c domain.Conversation, left int64, by, why string) error {
	runs, err := queryColumn[int64](ctx, tx, `SELECT DISTINCT q.run_id FROM questions q WHERE q.conversation_id = ? AND q.state = 'pending'`, c.ID)
	if err != nil {
		return fmt.Errorf("leave version %d: %w", left, err)
	}
	if err := db.supersede(ctx, tx, by, why, `SELECT id FROM questions WHERE conversation_id = ? AND state = 'pending'`, c.ID); err != nil {
		return err
	}
	for _, run := range runs {
		var state string
		if err := tx.QueryRowContext(ctx, `SELECT state FROM runs WHERE id = ?`, run).Scan(&state); err != nil {
			return fmt.Errorf("leave version %d: %w", left, err)
		}
		if ch := domain.AfterLeave(domain.RunState(state)); ch.State != "" {
			if err := db.setRunState(ctx, tx, c.ID, run, ch.State, ch.Error); err != nil {
				return err
			}
		}
	}
	return nil
}

// Regenerate starts a new version of the conversation in which the agent answers the
// person's last message again: it shares the log up to that message (and what intake made
// of it), and runs the agent anew. A nonce used before returns step 0.
func (db *DB) Regenerate(ctx context.Context, convID int64, by, nonce string) (stepID, version int64, err error) {
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		c, vs, shown, evs, err := db.branchable(ctx, tx, convID)
		if err != nil {
			return err
		}
		if used, err := runNonceUsed(ctx, tx, convID, nonce); err != nil || used {
			return err
		}
		if err := domain.CheckBranching(c, domain.Regenerate); err != nil {
			return err
		}
		fork := regenerateFork(evs)
		if fork == 0 {
			return domain.Errorf(domain.EINVALID, "There is no reply to regenerate yet.")
		}
		if version, err = db.branch(ctx, tx, c, vs, shown, fork, domain.VersionRegenerate, by); err != nil {
			return err
		}
		c.Version = version
		stepID, err = db.newRun(ctx, tx, c, nonce, nil)
		return err
	})
	return stepID, version, err
}

// runNonceUsed reports whether a run of the conversation was started with the nonce (a
// request sent twice: a double click, a retry); an empty nonce never was.
func runNonceUsed(ctx context.Context, tx *Tx, convID int64, nonce string) (bool, error) {
	if nonce == "" {
		return false, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE conversation_id = ? AND nonce = ? AND nonce <> ''`, convID, nonce).Scan(&n); err != nil {
		return false, fmt.Errorf("nonce: %w", err)
	}
	return n > 0, nil
}

// regenerateFork is where regenerating the last reply branches: after the person's last
// message, its run's start and its intake (the new run shares them), 0 when there is none.
func regenerateFork(evs []domain.Event) int64 {
	last := -1
	for i, ev := range evs {
		if ev.Kind == domain.EventUserMessage {
			last = i
		}
	}
	if last < 0 {
		return 0
	}
	run, fork := evs[last].RunID, evs[last].ID
	for _, ev := range evs[last+1:] {
		if ev.RunID != run {
			continue
		}
		if ev.Kind == domain.EventUserMessage || ev.Kind == domain.EventIntake || ev.Kind == domain.EventRunState && ev.State == domain.StateRunning {
			fork = ev.ID
			continue
		}
		break
	}
	return fork
}

// Edit starts a new version of the conversation from just before one of the person's
// messages, with m in its place, and runs the agent on it. A nonce used before returns
// step 0.
func (db *DB) Edit(ctx context.Context, convID, messageID int64, m domain.Message) (stepID, version int64, err error) {
	err = db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		c, vs, shown, evs, err := db.branchable(ctx, tx, convID)
		if err != nil {
			return err
		}
		if used, err := runNonceUsed(ctx, tx, convID, m.Nonce); err != nil || used {
			return err
		}
		if err := domain.CheckBranching(c, domain.EditMessage); err != nil {
			return err
		}
		fork, found := int64(0), false
		var kept []domain.DocumentRef // the files sent with the message stay with it
		for _, ev := range evs {
			if ev.ID == messageID {
				found = ev.Kind == domain.EventUserMessage
				for _, d := range ev.Documents {
					if d.Label == domain.LabelUpload {
						kept = append(kept, d)
					}
				}
				break
			}
			// A version's start is no point of its own: editing its message again is
			// another version of the same point.
			if ev.Kind != domain.EventVersion {
				fork = ev.ID
			}
		}
		if !found {
			return domain.Errorf(domain.ENOTFOUND, "Message %d is not one of yours in the version shown.", messageID)
		}
		if version, err = db.branch(ctx, tx, c, vs, shown, fork, domain.VersionEdit, m.Author); err != nil {
			return err
		}
		c.Version = version
		docs, err := db.insertDocuments(ctx, tx, convID, domain.LabelUpload, uploads(m.Files))
		if err != nil {
			return err
		}
		docs = append(kept, docs...)
		stepID, err = db.newRun(ctx, tx, c, m.Nonce, []pendingMessage{{text: m.Text, author: m.Author, nonce: m.Nonce, docs: docs}})
		return err
	})
	return stepID, version, err
}

// branchable reads, in tx, a conversation that may branch and the path it shows.
func (db *DB) branchable(ctx context.Context, tx *Tx, convID int64) (domain.Conversation, domain.Versions, int64, []domain.Event, error) {
	c, err := conversation(ctx, tx, convID)
	if err != nil {
		return c, nil, 0, nil, err
	}
	vs, shown, err := versionsOf(ctx, tx, convID)
	if err != nil {
		return c, nil, 0, nil, err
	}
	evs, err := pathEvents(ctx, tx, convID, vs.Path(shown), 0)
	return c, vs, shown, evs, err
}

// ChooseVersion shows version n of the conversation: the version left keeps everything,
// its questions still waiting closed as superseded. The conversation's state becomes that
// of the version's newest run (see conversationState).
func (db *DB) ChooseVersion(ctx context.Context, convID, n int64, by string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		c, err := conversation(ctx, tx, convID)
		if err != nil {
			return err
		}
		vs, shown, err := versionsOf(ctx, tx, convID)
		if err != nil {
			return err
		}
		if _, ok := vs.Find(n); !ok {
			return domain.NoVersion(convID, n)
		}
		if n == shown {
			return nil
		}
		if err := domain.CheckBranching(c, domain.TurnToVersion); err != nil {
			return err
		}
		return db.show(ctx, tx, c, shown, n, "", by, "The person turned to another version of the conversation; Retry there asks again.")
	})
}
