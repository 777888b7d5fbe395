package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-chat/parley/agent"
)

// SaveDrafts stores the text of messages still being written, all in one transaction: the
// runner's group commit. A crash loses at most the text of the last batch.
func (db *DB) SaveDrafts(ctx context.Context, drafts []agent.Draft) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		insert := tx.StmtContext(ctx, db.stmt.insertDraft)
		for _, d := range drafts {
			if _, err := insert.ExecContext(ctx, d.ConversationID, d.MessageID, d.At, d.RunID, d.Author, d.Text); err != nil {
				return fmt.Errorf("save draft: %w", err)
			}
		}
		return nil
	})
}

func (db *DB) deleteDrafts(ctx context.Context, tx *sql.Tx, convID int64) error {
	if _, err := tx.StmtContext(ctx, db.stmt.deleteDrafts).ExecContext(ctx, convID); err != nil {
		return fmt.Errorf("delete drafts: %w", err)
	}
	return nil
}

// endMessages ends what a step left open: its partial message, when the runner has it,
// replaces the conversation's drafts; after a crash the drafts themselves become the
// partial messages, marked interrupted. A draft whose message was finished meanwhile (a
// batch stored just after the message ended) is dropped.
func (db *DB) endMessages(ctx context.Context, tx *sql.Tx, convID, runID int64, partial *agent.Event) error {
	if partial != nil {
		ev := *partial
		ev.ConversationID, ev.RunID, ev.Kind, ev.Interrupted = convID, runID, agent.EventAgentMessage, true
		if _, err := db.insertEvent(ctx, tx, ev); err != nil {
			return err
		}
		return db.deleteDrafts(ctx, tx, convID)
	}
	rows, err := tx.QueryContext(ctx, `SELECT run_id, message_id, author, text FROM drafts WHERE conversation_id = ? ORDER BY message_id, at`, convID)
	if err != nil {
		return fmt.Errorf("drafts: %w", err)
	}
	type msg struct {
		runID      int64
		id, author string
		text       strings.Builder
	}
	var order []*msg
	byID := map[string]*msg{}
	for rows.Next() {
		var m msg
		var text string
		if err := rows.Scan(&m.runID, &m.id, &m.author, &text); err != nil {
			rows.Close()
			return fmt.Errorf("drafts: %w", err)
		}
		if byID[m.id] == nil {
			byID[m.id] = &msg{runID: m.runID, id: m.id, author: m.author}
			order = append(order, byID[m.id])
		}
		byID[m.id].text.WriteString(text)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("drafts: %w", err)
	}
	if len(order) == 0 {
		return nil
	}
	// Messages in the order they were written: by step, then by their number in the step.
	slices.SortFunc(order, func(a, b *msg) int { return compareMessageIDs(a.id, b.id) })
	finished, err := finishedMessages(ctx, tx, convID, order[0].runID)
	if err != nil {
		return err
	}
	for _, m := range order {
		if finished[m.id] {
			continue
		}
		ev := agent.Event{ConversationID: convID, RunID: m.runID, Kind: agent.EventAgentMessage, MessageID: m.id, Text: m.text.String(), Author: m.author, Interrupted: true}
		if _, err := db.insertEvent(ctx, tx, ev); err != nil {
			return err
		}
	}
	return db.deleteDrafts(ctx, tx, convID)
}

// compareMessageIDs orders message ids ("step-n") numerically.
func compareMessageIDs(a, b string) int {
	num := func(id string) (int, int) {
		s, n, _ := strings.Cut(id, "-")
		x, _ := strconv.Atoi(s)
		y, _ := strconv.Atoi(n)
		return x, y
	}
	as, an := num(a)
	bs, bn := num(b)
	if c := cmp.Compare(as, bs); c != 0 {
		return c
	}
	return cmp.Compare(an, bn)
}

// finishedMessages are the ids of the agent messages of the conversation from run on.
func finishedMessages(ctx context.Context, tx *sql.Tx, convID, runID int64) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT json_extract(payload, '$.message_id') FROM events
		WHERE conversation_id = ? AND run_id >= ? AND kind = 'agent_message'`, convID, runID)
	if err != nil {
		return nil, fmt.Errorf("finished messages: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id sql.NullString
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id.String] = true
	}
	return out, rows.Err()
}
