package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/parley-chat/parley/domain"
)

// A batch of drafts is one row of draft_batches: the text written in every conversation
// since the batch before, as the runner's group commit hands it over. One row a batch keeps
// the writes few and at the end of the table, whatever the number of conversations.
type storedDraft struct {
	Conversation int64  `json:"c"` // first: WrittenElsewhere finds a conversation's by `{"c":N,`
	Run          int64  `json:"r"`
	Message      string `json:"m"`
	At           int    `json:"a"`
	Author       string `json:"u"`
	Text         string `json:"t"`
}

// draftIndex knows which batches hold text of messages still being written; a batch is
// deleted as soon as none of its messages is, so that the table holds little more than
// that text. It lives in memory: after a restart, Recover reads every batch left and
// deletes them all.
//
// On PostgreSQL a batch is saved beside the transactions that end messages. A batch is
// added once it has committed, under saving, which an end takes too: an end frees only
// batches committed, and marks its messages closed, so that a batch saved just after (its
// text gathered before the end) does not count them.
type draftIndex struct {
	saving sync.Mutex                   // held from a batch's insert until it is added
	mu     sync.Mutex                   // guards what follows
	open   map[int64]map[string][]int64 // conversation → message → its batches
	refs   map[int64]int                // batch → messages still being written with text in it
	closed map[closedMessage]bool       // messages ended lately
}

type closedMessage struct {
	conv int64
	msg  string
}

// maxClosed bounds draftIndex.closed.
const maxClosed = 1 << 14

// add records the batch's messages, but those ended meanwhile, and reports whether any of
// them is still being written (a batch of none is useless).
func (x *draftIndex) add(batch int64, drafts []domain.Draft) (needed bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.open == nil {
		x.open, x.refs = map[int64]map[string][]int64{}, map[int64]int{}
	}
	for _, d := range drafts {
		if x.closed[closedMessage{d.ConversationID, d.MessageID}] {
			continue
		}
		msgs := x.open[d.ConversationID]
		if msgs == nil {
			msgs = map[string][]int64{}
			x.open[d.ConversationID] = msgs
		}
		if b := msgs[d.MessageID]; len(b) > 0 && b[len(b)-1] == batch {
			continue
		}
		msgs[d.MessageID] = append(msgs[d.MessageID], batch)
		x.refs[batch]++
	}
	return x.refs[batch] > 0
}

// finish forgets a message (every message of the conversation when msg is "") and returns
// the batches no message needs any more, and how to undo it (the end did not commit).
func (x *draftIndex) finish(conv int64, msg string) (free []int64, undo func()) {
	x.saving.Lock() // a batch being saved is added first
	defer x.saving.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed == nil || len(x.closed) >= maxClosed {
		x.closed = map[closedMessage]bool{}
	}
	if msg != "" {
		x.closed[closedMessage{conv, msg}] = true
	}
	msgs := x.open[conv]
	ended := map[string][]int64{}
	for id, batches := range msgs {
		if msg != "" && id != msg {
			continue
		}
		for _, b := range batches {
			if x.refs[b]--; x.refs[b] <= 0 {
				delete(x.refs, b)
				free = append(free, b)
			}
		}
		ended[id] = batches
		x.closed[closedMessage{conv, id}] = true
		delete(msgs, id)
	}
	if len(msgs) == 0 {
		delete(x.open, conv)
	}
	return free, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		delete(x.closed, closedMessage{conv, msg})
		for id, batches := range ended {
			delete(x.closed, closedMessage{conv, id})
			if x.open[conv] == nil {
				x.open[conv] = map[string][]int64{}
			}
			x.open[conv][id] = batches
			for _, b := range batches {
				x.refs[b]++
			}
		}
	}
}

// SaveDrafts stores the text of messages still being written as one batch, in one
// transaction: the runner's group commit. A crash loses at most the text after it.
func (db *DB) SaveDrafts(ctx context.Context, drafts []domain.Draft) error {
	if db.pg {
		var err error
		if drafts, err = db.ownDrafts(ctx, drafts); err != nil || len(drafts) == 0 {
			return err
		}
	}
	rows := make([]storedDraft, len(drafts))
	for i, d := range drafts {
		rows[i] = storedDraft{Conversation: d.ConversationID, Run: d.RunID, Message: d.MessageID, At: d.At, Author: d.Author, Text: d.Text}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("save drafts: %w", err)
	}
	var useless int64
	err = db.tx(ctx, func(tx *Tx) error {
		db.drafts.saving.Lock()
		tx.onEnd = append(tx.onEnd, func(committed bool) {
			if committed && !db.drafts.add(tx.batch, drafts) {
				useless = tx.batch // every message of it ended meanwhile
			}
			db.drafts.saving.Unlock()
		})
		if err := tx.hotQueryRow(ctx, db.stmt.insertDrafts, insertDraftsSQL, string(b), db.instance).Scan(&tx.batch); err != nil {
			return fmt.Errorf("save drafts: %w", err)
		}
		return nil
	})
	if err == nil && useless != 0 {
		err = db.exec(ctx, `DELETE FROM draft_batches WHERE id = ?`, useless)
	}
	return err
}

// ownDrafts keeps the drafts of runs whose step is still started and this instance's: the
// text of a step another instance took over is no longer written (PostgreSQL).
func (db *DB) ownDrafts(ctx context.Context, drafts []domain.Draft) ([]domain.Draft, error) {
	runs := map[int64]bool{}
	var args []any
	for _, d := range drafts {
		if d.RunID != 0 && !runs[d.RunID] {
			runs[d.RunID] = false
			args = append(args, d.RunID)
		}
	}
	if len(args) == 0 {
		return drafts, nil
	}
	ours, err := queryColumn[int64](ctx, db.read, `SELECT run_id FROM steps WHERE state = 'started' AND owner = ? AND run_id IN (?`+
		strings.Repeat(", ?", len(args)-1)+`)`, append([]any{db.instance}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("save drafts: %w", err)
	}
	for _, id := range ours {
		runs[id] = true
	}
	return slices.DeleteFunc(slices.Clone(drafts), func(d domain.Draft) bool { return d.RunID != 0 && !runs[d.RunID] }), nil
}

// releaseDrafts deletes the batches an event makes useless: a finished message's, and at a
// step's end every batch of its conversation.
func (db *DB) releaseDrafts(ctx context.Context, tx *Tx, ev domain.Event) error {
	var free []int64
	var undo func()
	switch {
	case ev.Kind == domain.EventAgentMessage:
		free, undo = db.drafts.finish(ev.ConversationID, ev.MessageID)
	case ev.Kind == domain.EventRunState && ev.State != domain.StateRunning:
		free, undo = db.drafts.finish(ev.ConversationID, "")
	default:
		return nil
	}
	tx.onEnd = append(tx.onEnd, func(committed bool) {
		if !committed {
			undo()
		}
	})
	for _, id := range free {
		if _, err := tx.hotExec(ctx, db.stmt.deleteDrafts, deleteDraftsSQL, id); err != nil {
			return fmt.Errorf("delete drafts: %w", err)
		}
	}
	return nil
}

// recovered are the messages a crash cut off, by conversation, as their drafts hold them.
type recovered map[int64][]domain.Event

// readDrafts reads the batches the condition selects (those left by instances gone) into
// the messages they hold, in the order they were written.
func readDrafts(ctx context.Context, q queryer, where string, args ...any) (recovered, error) {
	rows, err := q.QueryContext(ctx, `SELECT drafts FROM draft_batches WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	defer rows.Close()
	type key struct {
		conv int64
		msg  string
	}
	var all []storedDraft
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("drafts: %w", err)
		}
		var batch []storedDraft
		if err := json.Unmarshal(b, &batch); err != nil {
			continue // a batch that cannot be read is text lost, not a failed start
		}
		all = append(all, batch...)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	slices.SortStableFunc(all, func(a, b storedDraft) int {
		return cmp.Or(cmp.Compare(a.Conversation, b.Conversation), compareMessageIDs(a.Message, b.Message), cmp.Compare(a.At, b.At))
	})
	out := recovered{}
	var last key
	for _, d := range all {
		msgs := out[d.Conversation]
		if k := (key{d.Conversation, d.Message}); k != last || len(msgs) == 0 {
			last = k
			msgs = append(msgs, domain.Event{ConversationID: d.Conversation, RunID: d.Run, Kind: domain.EventAgentMessage,
				MessageID: d.Message, Author: d.Author, Interrupted: true})
		}
		msgs[len(msgs)-1].Text += d.Text
		out[d.Conversation] = msgs
	}
	return out, nil
}

// compareMessageIDs orders message ids ("step-n") as they were made.
func compareMessageIDs(a, b string) int {
	num := func(id string) (int, int) {
		s, n, _ := strings.Cut(id, "-")
		x, _ := strconv.Atoi(s)
		y, _ := strconv.Atoi(n)
		return x, y
	}
	as, an := num(a)
	bs, bn := num(b)
	return cmp.Or(cmp.Compare(as, bs), cmp.Compare(an, bn))
}

// endMessages keeps what a step cut off was writing: its partial message, when the runner has
// it, or after a crash the messages its drafts hold. A draft whose message was finished
// meanwhile (a batch stored just after the message ended) adds nothing.
func (db *DB) endMessages(ctx context.Context, tx *Tx, convID, runID int64, partial *domain.Event, lost recovered) error {
	if partial != nil {
		ev := *partial
		ev.ConversationID, ev.RunID, ev.Kind, ev.Interrupted = convID, runID, domain.EventAgentMessage, true
		_, err := db.insertEvent(ctx, tx, ev)
		return err
	}
	msgs := lost[convID]
	if len(msgs) == 0 {
		return nil
	}
	finished, err := finishedMessages(ctx, tx, convID, msgs[0].RunID)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if !finished[m.MessageID] && strings.TrimSpace(m.Text) != "" {
			if _, err := db.insertEvent(ctx, tx, m); err != nil {
				return err
			}
		}
	}
	delete(lost, convID)
	return nil
}

// finishedMessages are the ids of the agent messages of the conversation from run on.
func finishedMessages(ctx context.Context, tx *Tx, convID, runID int64) (map[string]bool, error) {
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
