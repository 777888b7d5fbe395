package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parley-chat/parley/domain"
)

// tx runs fn in one write transaction and hands the events it inserted to the observer
// once committed. On SQLite it is the one writer's: transactions run one at a time, in the
// order the observer sees them. On PostgreSQL transactions run side by side, each locking
// what it changes (see Tx.lockConversation), and the observer takes the events of every
// instance from the notifications, in each conversation's order; a transaction that meets a
// deadlock or a serialization failure is run again, a few times.
func (db *DB) tx(ctx context.Context, fn func(*Tx) error) (err error) {
	if db.writes != nil {
		defer db.timeWrite(time.Now(), &err)
	}
	if db.pg {
		for try := 1; ; try++ {
			_, err = db.commit(ctx, fn)
			if try == 3 || !pgRetryable(err) {
				break
			}
		}
		db.noteWrite(err)
		return err
	}
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	t, err := db.commit(ctx, fn)
	db.noteWrite(err)
	if err != nil {
		return err
	}
	if t.authTold != nil {
		t.authTold()
	}
	if db.observe != nil && len(t.events) > 0 {
		db.observe(t.events)
	}
	return nil
}

// Tx is a write transaction: the SQL one, with what it wrote that is told once it commits.
type Tx struct {
	*sql.Tx
	db *DB
	// events are the events it inserted; batch the draft batch it saved (PostgreSQL tells
	// the other instances of both).
	events []domain.Event
	batch  int64
	// authTold: the function told of a change of access in it (SQLite; told again once it
	// commits).
	authTold func()
	// locked are the conversations it holds the write lock of, notes the words of its
	// notification besides its events and batch (PostgreSQL).
	locked map[int64]bool
	notes  []string
	// step is the step lockStep read last (its fence's, for a step's own write).
	step stepRow
	// held are the writes later holds, heldErr the first failure to write them; touched the
	// conversations whose updated_at an event of it has set.
	held    []heldWrite
	heldErr error
	touched map[int64]bool
	// onEnd run once it has ended: committed, or not.
	onEnd []func(committed bool)
}

// lockConversation takes the conversation's write lock until the transaction ends: what
// changes a conversation (its runs, steps, questions, events, drafts' end) is written under
// it, so that two transactions of one conversation run one after the other, and its events
// commit in the order of their ids. On PostgreSQL it is the conversation's row, locked as an
// update locks it (other conversations, and readers, go on); on SQLite the one writer holds
// everything already. A conversation that does not exist gives ENOTFOUND.
func (tx *Tx) lockConversation(ctx context.Context, id int64) error {
	if !tx.db.pg || tx.locked[id] {
		return nil
	}
	var convID int64
	err := tx.lockVia(ctx, `SELECT c.id FROM conversations c WHERE c.id = ?`, "c", id, &convID)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Errorf(domain.ENOTFOUND, "Conversation %d not found.", id)
	}
	if err != nil {
		return fmt.Errorf("lock conversation %d: %w", id, err)
	}
	return nil
}

// fence takes the write lock of the step's conversation and checks, under it, that the step
// is still started and this instance's: a takeover interrupts it under the same lock, after
// which every write the step tries is refused (domain.ErrFenced).
func (tx *Tx) fence(ctx context.Context, stepID int64) error {
	s, err := tx.lockStep(ctx, stepID)
	if err != nil {
		return err
	}
	if s.state != "started" || s.owner != tx.db.instance {
		return fmt.Errorf("step %d: %w", stepID, domain.ErrFenced)
	}
	return nil
}

// lockRun takes the write lock of the run's conversation and returns the conversation.
func (tx *Tx) lockRun(ctx context.Context, runID int64) (convID int64, err error) {
	if err := tx.lockVia(ctx, `SELECT c.id FROM runs r JOIN conversations c ON c.id = r.conversation_id WHERE r.id = ?`, "c", runID, &convID); err != nil {
		return 0, fmt.Errorf("run %d: %w", runID, err)
	}
	return convID, nil
}

// stepRow is a step as lockStep read it.
type stepRow struct {
	id, run, conv, seen, version int64
	state, owner, trigger        string
}

// lockStep takes the write lock of the step's conversation, and reads the step as it stands
// under that lock: ENOTFOUND when there is no such step. On PostgreSQL the step's row is
// locked too, in the same statement and after the conversation's, as every writer of a step
// locks them: so the statement reads the step as a takeover that held the locks meanwhile
// left it, not as it was when the statement began. A transaction reads a step once (the
// fence's read serves the step's own end).
func (tx *Tx) lockStep(ctx context.Context, stepID int64) (stepRow, error) {
	if tx.step.id == stepID && stepID != 0 {
		return tx.step, nil
	}
	s := stepRow{id: stepID}
	err := tx.lockVia(ctx, `SELECT c.id, s.run_id, s.answers_seen, s.state, s.owner, s.trigger, r.version
		FROM steps s JOIN runs r ON r.id = s.run_id JOIN conversations c ON c.id = r.conversation_id WHERE s.id = ?`, "c, s",
		stepID, &s.conv, &s.run, &s.seen, &s.state, &s.owner, &s.trigger, &s.version)
	if errors.Is(err, sql.ErrNoRows) {
		return s, domain.Errorf(domain.ENOTFOUND, "Step %d not found.", stepID)
	}
	if err != nil {
		return s, fmt.Errorf("step %d: %w", stepID, err)
	}
	tx.step = s
	return s, nil
}

// changedStep says the transaction changed the step lockStep read: a later lockStep reads it
// again.
func (tx *Tx) changedStep() { tx.step = stepRow{} }

// lockQuestion takes the write lock of the question's conversation and returns the question's
// conversation, run and state; ENOTFOUND when there is no such question. On PostgreSQL the
// question's row is locked too (after the conversation's, as lockStep does), so that its state
// is read as the last transaction that held the lock left it.
func (tx *Tx) lockQuestion(ctx context.Context, questionID int64) (convID, runID int64, state string, err error) {
	err = tx.lockVia(ctx, `SELECT c.id, q.run_id, q.state FROM questions q JOIN conversations c ON c.id = q.conversation_id WHERE q.id = ?`, "c, q",
		questionID, &convID, &runID, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, "", domain.QuestionNotFound(questionID)
	}
	if err != nil {
		return 0, 0, "", fmt.Errorf("question %d: %w", questionID, err)
	}
	return convID, runID, state, nil
}

// lockVia runs query, a SELECT of the conversation's id (c.id) first and then what else
// dest scans, locking the rows of of (c, and any other table whose row it reads that another
// transaction may change under the conversation's lock): sql.ErrNoRows when there is none.
// On SQLite, where the one writer holds everything already, it is the plain SELECT.
func (tx *Tx) lockVia(ctx context.Context, query, of string, id int64, convID *int64, dest ...any) error {
	if tx.db.pg {
		query += ` FOR NO KEY UPDATE OF ` + of
	}
	if err := tx.QueryRowContext(ctx, query, id).Scan(append([]any{convID}, dest...)...); err != nil {
		return err
	}
	if tx.locked == nil {
		tx.locked = map[int64]bool{}
	}
	tx.locked[*convID] = true
	return nil
}

// lockName takes a lock of PostgreSQL's advisory kind named name until the transaction
// ends: for the few writes that check something across rows no one row holds (the last
// staff member, a group's members), so that two such checks do not both pass.
func (tx *Tx) lockName(ctx context.Context, name string) error {
	if !tx.db.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, "parley:"+name)
	return err
}

// commit runs fn in a write transaction and commits it. A failure of the storage beneath
// comes back as EUNAVAILABLE.
func (db *DB) commit(ctx context.Context, fn func(*Tx) error) (_ *Tx, err error) {
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, storageError(err)
	}
	defer sqlTx.Rollback()
	tx := &Tx{Tx: sqlTx, db: db}
	defer func() {
		for _, end := range tx.onEnd {
			end(err == nil)
		}
	}()
	if step := domain.StepOf(ctx); step != 0 && db.pg {
		if err := tx.fence(ctx, step); err != nil {
			return nil, storageError(err)
		}
	}
	if err := fn(tx); err != nil || tx.heldErr != nil {
		if tx.heldErr != nil {
			err = tx.heldErr // the cause of what failed after it, even if fn went on
		}
		return nil, storageError(err)
	}
	if len(tx.held) > 0 {
		// The writes held to the end go with the COMMIT, in one round trip (see atCommit).
		query, args := tx.withHeld(`SELECT 1`, nil)
		if _, err := tx.Tx.ExecContext(atCommit(ctx), query, args...); err != nil {
			return nil, storageError(err)
		}
	}
	if !db.pg {
		// Read in the transaction, after the writer's lock is taken: a change of access
		// another process committed before it is seen here, before this one's events show.
		var n int64
		if err := tx.StmtContext(ctx, db.stmt.authChanges).QueryRowContext(ctx).Scan(&n); err != nil {
			return nil, storageError(err)
		}
		if n != db.authSeen {
			db.authSeen = n
			// Before the commit: whoever can read this transaction's events (a stream
			// catching up from the log, the hub) finds the change of access told first. A
			// commit that fails after it has only made the streams check again. When this
			// transaction made the change itself, a check now reads the access before it;
			// tx tells again once it is committed.
			if fn := db.authChanged(); fn != nil {
				fn()
				tx.authTold = fn
			}
		}
	}
	if db.pg {
		names, runs := eventRuns(tx.events)
		if note := tx.notification(names); note != "" {
			// Sent with the COMMIT, in one round trip (see atCommit).
			if _, err := tx.Tx.ExecContext(atCommit(ctx), `SELECT pg_notify(?, ?)`, db.channel, note); err != nil {
				return nil, storageError(err)
			}
		}
		// The listener takes this instance's own events from here rather than the log.
		db.own.keep(names, runs)
		if err := sqlTx.Commit(); err != nil {
			db.own.drop(names)
			return nil, storageError(err)
		}
		return tx, nil
	}
	return tx, storageError(sqlTx.Commit())
}

// exec runs one statement that writes on its own, outside any transaction of the store's:
// the writes that are not a person's (a session's last use, a stream let go), which need no
// lock of a conversation and hand no events over. On PostgreSQL it is one round trip on the
// light pool (see lightTx).
func (db *DB) exec(ctx context.Context, query string, args ...any) error {
	pool := db.write
	if db.pg {
		pool = db.light
	}
	_, err := pool.ExecContext(ctx, query, args...)
	err = storageError(err)
	db.noteWrite(err)
	return err
}

// lightTx runs fn in a transaction of the writes that are not a person's (a rate limit's
// count, a stream's registration): on PostgreSQL, on a few connections of their own that
// commit without waiting for the disk, so that they neither wait for nor hold up the
// person's writes; a crash may lose their last moment, which is harmless. fn must write
// no events. On SQLite, a transaction of the writer's like any other.
func (db *DB) lightTx(ctx context.Context, fn func(*Tx) error) error {
	if !db.pg {
		return db.tx(ctx, fn)
	}
	sqlTx, err := db.light.BeginTx(ctx, nil)
	if err != nil {
		return storageError(err)
	}
	defer sqlTx.Rollback()
	tx := &Tx{Tx: sqlTx, db: db}
	if err := fn(tx); err != nil {
		return storageError(err)
	}
	if err := tx.flush(ctx); err != nil {
		return storageError(err)
	}
	return storageError(sqlTx.Commit())
}
