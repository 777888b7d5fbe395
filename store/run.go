package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/parley-chat/parley/domain"
)

// setRunState moves a run to state and logs it: runs.state is where a run's state is kept,
// the run_state event the log's record of the change, which the streams read. The state of
// its conversation follows (see conversationState).
func (db *DB) setRunState(ctx context.Context, tx *Tx, convID, runID int64, state domain.RunState, errMsg string) error {
	now := formatTime(db.Now())
	// With the event, in one statement on PostgreSQL.
	if err := tx.later(ctx, `UPDATE runs SET state = ?, updated_at = ? WHERE id = ?`, state, now, runID); err != nil {
		return fmt.Errorf("set run state: %w", err)
	}
	_, err := db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, RunID: runID, Kind: domain.EventRunState, State: state, Error: errMsg})
	return err
}

func (db *DB) queueStep(ctx context.Context, tx *Tx, runID int64, trigger domain.Trigger) (int64, error) {
	id, err := insertID(ctx, tx, `INSERT INTO steps (run_id, trigger, state, created_at, owner) VALUES (?, ?, 'queued', ?, ?)`,
		runID, trigger, formatTime(db.Now()), db.instance)
	if err != nil {
		return 0, fmt.Errorf("queue step: %w", err)
	}
	return id, nil
}

// StartRun records the person's message, supersedes questions still pending, and queues a
// step; messages queued before it go first, in the same run. While the agent works, the
// message is queued instead (Sent.Queued), to be sent when the run ends, unless it
// interrupts, or the step waits for the person's answer to a live question (ErrRunning). A message re-sent with the same nonce (a double Enter, a retried
// request) is recorded once: the second call returns a zero Sent and no error.
func (db *DB) StartRun(ctx context.Context, convID int64, m domain.Message) (domain.Sent, error) {
	var sent domain.Sent
	err := db.tx(ctx, func(tx *Tx) error {
		sent = domain.Sent{} // (a transaction run again starts afresh)
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		c, err := conversation(ctx, tx, convID)
		if err != nil {
			return err
		}
		f := domain.MessageFacts{Inbound: c.Inbound(), State: c.State, Interrupt: m.Interrupt}
		if m.Nonce != "" {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM runs WHERE conversation_id = ?1 AND nonce = ?2 AND nonce <> '')
				+ (SELECT count(*) FROM queued_messages WHERE conversation_id = ?1 AND nonce = ?2)
				+ (SELECT count(*) FROM events WHERE conversation_id = ?1 AND kind = 'message_queued' AND json_extract(payload, '$.nonce') = ?2)`,
				convID, m.Nonce).Scan(&n); err != nil {
				return fmt.Errorf("start run: %w", err)
			}
			f.Recorded = n > 0
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM questions WHERE conversation_id = ? AND state = 'pending'
				AND live = 1`, convID).Scan(&f.LivePending); err != nil {
			return fmt.Errorf("start run: %w", err)
		}
		route, err := domain.RouteMessage(f)
		if err != nil || route == domain.RouteNone {
			return err
		}
		docs, err := db.insertDocuments(ctx, tx, convID, domain.LabelUpload, uploads(m.Files))
		if err != nil {
			return err
		}
		msg := pendingMessage{text: m.Text, author: m.Author, nonce: m.Nonce, docs: docs}
		if route == domain.RouteQueue {
			sent.Queued, err = db.queueMessage(ctx, tx, c, msg)
			return err
		}
		queued, err := db.takeQueued(ctx, tx, convID)
		if err != nil {
			return err
		}
		sent.Step, err = db.newRun(ctx, tx, c, m.Nonce, append(queued, msg))
		return err
	})
	return sent, err
}

// pendingMessage is a person's message about to be sent: a new one, or one queued before
// (queued, the id of its message_queued event).
type pendingMessage struct {
	text, author, nonce string
	docs                []domain.DocumentRef
	queued              int64
}

// newRun starts a run in the version the conversation shows with the person's messages
// (none, to regenerate a reply), superseding the questions still pending, and queues its
// first step.
func (db *DB) newRun(ctx context.Context, tx *Tx, c domain.Conversation, nonce string, msgs []pendingMessage) (int64, error) {
	by := "parley"
	if len(msgs) > 0 {
		by = msgs[len(msgs)-1].author
	}
	if err := db.supersede(ctx, tx, by, "The person sent a new message instead of answering.",
		`SELECT id FROM questions WHERE conversation_id = ? AND state = 'pending'`, c.ID); err != nil {
		return 0, err
	}
	now := formatTime(db.Now())
	runID, err := insertID(ctx, tx, `INSERT INTO runs (conversation_id, state, nonce, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?)`,
		c.ID, domain.RunStartsWithStep, nonce, now, now, c.Version)
	if err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	for _, m := range msgs {
		ev, err := db.insertEvent(ctx, tx, domain.Event{ConversationID: c.ID, RunID: runID, Kind: domain.EventUserMessage, Text: m.text, Author: m.author,
			Nonce: m.nonce, Documents: m.docs, Queued: m.queued})
		if err != nil {
			return 0, err
		}
		if err := attachDocuments(ctx, tx, ev.ID, m.docs); err != nil {
			return 0, err
		}
	}
	stepID, err := db.queueStep(ctx, tx, runID, domain.TriggerMessage)
	if err != nil {
		return 0, err
	}
	return stepID, db.setRunState(ctx, tx, c.ID, runID, domain.StateRunning, "")
}

// BeginStep marks a queued step started and returns what the agent needs to run it. The
// history is read after the transaction, from a reader: the writer is not held for it.
func (db *DB) BeginStep(ctx context.Context, stepID int64) (domain.Conversation, domain.StepInput, error) {
	var c domain.Conversation
	var in domain.StepInput
	var version int64
	err := db.tx(ctx, func(tx *Tx) error {
		s, err := tx.lockStep(ctx, stepID)
		if err != nil {
			return err
		}
		in.RunID, in.ConversationID, version = s.run, s.conv, s.version
		if s.state != "queued" {
			return domain.Errorf(domain.ECONFLICT, "Step %d is %s, not queued.", stepID, s.state)
		}
		in.StepID, in.Trigger = stepID, domain.Trigger(s.trigger)
		if c, err = conversation(ctx, tx, in.ConversationID); err != nil {
			return err
		}
		// Nothing reads it before the COMMIT, which it goes with on PostgreSQL (see later).
		tx.changedStep()
		return tx.later(ctx, `UPDATE steps SET state = 'started', started_at = ?, owner = ?,
			answers_seen = (SELECT coalesce(max(id), 0) FROM answers) WHERE id = ?`, formatTime(db.Now()), db.instance, stepID)
	})
	if err != nil {
		return c, in, err
	}
	vs, _, err := versionsOf(ctx, db.read, in.ConversationID)
	if err != nil {
		return c, in, err
	}
	in.History, err = pathEvents(ctx, db.read, in.ConversationID, vs.Path(version), 0)
	return c, in, err
}

// FinishStep ends a step and moves its run to waiting, done, failed or (stepErr
// domain.ErrStopped) stopped. partial is the message the step was cut off in, if any.
func (db *DB) FinishStep(ctx context.Context, stepID int64, partial *domain.Event, stepErr error) (int64, error) {
	var resume int64
	err := db.tx(ctx, func(tx *Tx) error {
		s, err := tx.lockStep(ctx, stepID)
		if err != nil {
			return err
		}
		runID, convID := s.run, s.conv
		switch {
		case db.pg && s.owner != db.instance:
			// Another instance took it over (this one's lease ran out meanwhile): its end is theirs.
			return fmt.Errorf("finish step %d: %w", stepID, domain.ErrFenced)
		case s.state != "queued" && s.state != "started":
			return domain.Errorf(domain.ECONFLICT, "Step %d has ended already (%s).", stepID, s.state)
		}
		// Where the run stands is read first: the step's end changes none of it, and is
		// written with the run's next event then (see later).
		end := domain.StepEndedWith(stepErr)
		if err := stepEndFacts(ctx, tx, runID, stepID, s.seen, &end); err != nil {
			return err
		}
		if err := tx.later(ctx, `UPDATE steps SET state = ?, error = ?, finished_at = ? WHERE id = ?`, end.StepState(), end.Error, formatTime(db.Now()), stepID); err != nil {
			return fmt.Errorf("finish step: %w", err)
		}
		tx.changedStep()
		if err := db.endMessages(ctx, tx, convID, runID, partial, nil); err != nil {
			return err
		}
		resume, err = db.changeRun(ctx, tx, convID, runID, domain.AfterStep(end))
		return err
	})
	return resume, err
}

// MaxStepsPerRun is how many steps a run may take before it fails as stuck (see
// domain.MaxStepsPerRun).
const MaxStepsPerRun = domain.MaxStepsPerRun

// stepEndFacts adds to a step's end where its run stands: its pending questions, those
// resolved since the step began (answers after seen), its queued steps and all its steps.
func stepEndFacts(ctx context.Context, tx *Tx, runID, stepID, seen int64, end *domain.StepEnd) error {
	// Read before the step's own end is written (see FinishStep): the step is not one of
	// those queued behind it, whatever its state.
	err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM questions WHERE run_id = ?1 AND state = 'pending'),
			(SELECT count(*) FROM answers a JOIN questions q ON q.id = a.question_id WHERE q.run_id = ?1 AND a.id > ?2 AND q.live = 0),
			(SELECT count(*) FROM steps WHERE run_id = ?1 AND state = 'queued' AND id <> ?3), (SELECT count(*) FROM steps WHERE run_id = ?1)`, runID, seen, stepID).
		Scan(&end.Pending, &end.ResolvedMeanwhile, &end.Queued, &end.Steps)
	if err != nil {
		return fmt.Errorf("step end: %w", err)
	}
	return nil
}

// changeRun writes what the domain decided for a run (see domain.RunChange) and returns the
// step it queued or the run the queued messages started, if any.
func (db *DB) changeRun(ctx context.Context, tx *Tx, convID, runID int64, ch domain.RunChange) (int64, error) {
	if ch.Supersede != "" {
		if err := db.supersede(ctx, tx, "parley", ch.Supersede,
			`SELECT id FROM questions WHERE run_id = ? AND state = 'pending'`, runID); err != nil {
			return 0, err
		}
	}
	var stepID int64
	if ch.Step != "" {
		var err error
		if stepID, err = db.queueStep(ctx, tx, runID, ch.Step); err != nil {
			return 0, err
		}
	}
	if ch.State != "" {
		if err := db.setRunState(ctx, tx, convID, runID, ch.State, ch.Error); err != nil {
			return 0, err
		}
	}
	if ch.SendQueued {
		return db.sendQueued(ctx, tx, convID)
	}
	return stepID, nil
}

// InterruptStep ends a started step that was cut off; its partial message is kept.
func (db *DB) InterruptStep(ctx context.Context, stepID int64, partial *domain.Event) error {
	return db.tx(ctx, func(tx *Tx) error { return db.interruptStep(ctx, tx, stepID, partial, nil) })
}

// interruptStep ends a step cut off: by shutdown (partial is what it was writing), or by a
// crash (lost holds what its drafts kept). A step that has ended already (another instance
// took it over) is left as it is.
func (db *DB) interruptStep(ctx context.Context, tx *Tx, stepID int64, partial *domain.Event, lost recovered) error {
	s, err := tx.lockStep(ctx, stepID)
	if err != nil {
		return err
	}
	runID, convID := s.run, s.conv
	if s.state != "queued" && s.state != "started" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'interrupted', finished_at = ? WHERE id = ?`, formatTime(db.Now()), stepID); err != nil {
		return fmt.Errorf("interrupt step: %w", err)
	}
	tx.changedStep()
	if err := db.endMessages(ctx, tx, convID, runID, partial, lost); err != nil {
		return err
	}
	// A live question does not count (see domain.AfterInterrupt).
	var pending int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM questions WHERE run_id = ? AND state = 'pending'
		AND live = 0`, runID).Scan(&pending); err != nil {
		return err
	}
	_, err = db.changeRun(ctx, tx, convID, runID, domain.AfterInterrupt(pending))
	return err
}

// RetryRun queues a new step on the current run (see currentRun) of a failed, interrupted or
// stopped conversation.
func (db *DB) RetryRun(ctx context.Context, convID int64) (int64, error) {
	var stepID int64
	err := db.tx(ctx, func(tx *Tx) error {
		if err := tx.lockConversation(ctx, convID); err != nil {
			return err
		}
		if _, err := conversation(ctx, tx, convID); err != nil {
			return err
		}
		runID, state, err := currentRun(ctx, tx, convID)
		if err != nil {
			return err
		}
		change, err := domain.Retry(state)
		if err != nil {
			return err
		}
		stepID, err = db.changeRun(ctx, tx, convID, runID, change)
		return err
	})
	return stepID, err
}

// currentRun returns a conversation's current run, the newest of the version it shows, and
// its state: the conversation's state (see conversationState). It returns 0 and an empty state when
// the conversation has none.
func currentRun(ctx context.Context, q queryer, convID int64) (int64, domain.RunState, error) {
	var id int64
	var state string
	err := q.QueryRowContext(ctx, `SELECT r.id, r.state FROM conversations c JOIN runs r ON r.conversation_id = c.id AND r.version = c.version
		WHERE c.id = ? ORDER BY r.id DESC LIMIT 1`, convID).Scan(&id, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("current run of conversation %d: %w", convID, err)
	}
	return id, domain.RunState(state), nil
}

// InterruptedConversations lists the agent's conversations whose run was cut off, oldest first.
func (db *DB) InterruptedConversations(ctx context.Context, agentName string) ([]int64, error) {
	ids, err := queryColumn[int64](ctx, db.read, `SELECT c.id FROM conversations c WHERE c.agent = ? AND `+conversationState+` = 'interrupted' ORDER BY c.id`, agentName)
	if err != nil {
		return nil, fmt.Errorf("interrupted conversations: %w", err)
	}
	return ids, nil
}
