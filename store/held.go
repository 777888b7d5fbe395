package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// A write whose outcome the transaction does not read (a run's new state, an answer's row)
// need not cost a round trip of its own on PostgreSQL: Tx.later holds it, and it goes ahead
// of the transaction's next statement, in the same statement, as a WITH of it. Before
// anything else the transaction says, what is held is written. On SQLite, where a statement
// costs no round trip, later writes at once.

// heldWrite is a write Tx.later holds: its statement (whose parameters are all a bare ?,
// numbered in order) and arguments.
type heldWrite struct {
	query string
	args  []any
}

// later writes query, an INSERT, UPDATE or DELETE whose outcome the transaction does not
// read, of a table the transaction's next statement does not write: at once on SQLite; on
// PostgreSQL with that statement (see withHeld). Its parameters are bare ?s.
func (tx *Tx) later(ctx context.Context, query string, args ...any) error {
	if !tx.db.pg {
		_, err := tx.Tx.ExecContext(ctx, query, args...)
		return err
	}
	// Two writes of one statement might write one row, which one statement may not do
	// twice: the first is written first.
	for _, h := range tx.held {
		if h.query == query {
			if err := tx.flush(ctx); err != nil {
				return err
			}
			break
		}
	}
	tx.held = append(tx.held, heldWrite{query, args})
	return nil
}

// withHeld returns query, whose parameters are bare ?s, with the writes held put ahead of it
// as a WITH, and their arguments ahead of args; the writes are no longer held. PostgreSQL
// runs a WITH's writes whether or not the statement reads them, all on the snapshot the
// statement starts with: so the statement does not read what they write.
func (tx *Tx) withHeld(query string, args []any) (string, []any) {
	if len(tx.held) == 0 {
		return query, args
	}
	var b strings.Builder
	var all []any
	for i, h := range tx.held {
		if i == 0 {
			b.WriteString("WITH ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString("held")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" AS (")
		b.WriteString(h.query)
		b.WriteString(")")
		all = append(all, h.args...)
	}
	tx.held = nil
	if rest, ok := strings.CutPrefix(query, "WITH "); ok {
		b.WriteString(", ")
		b.WriteString(rest)
	} else {
		b.WriteString(" ")
		b.WriteString(query)
	}
	return b.String(), append(all, args...)
}

// flush writes what is held, in one statement. A failure is kept for the transaction's end
// (see commit), whose later statements fail for it anyway.
func (tx *Tx) flush(ctx context.Context) error {
	if len(tx.held) == 0 {
		return nil
	}
	query, args := tx.withHeld(`SELECT 1`, nil)
	_, err := tx.Tx.ExecContext(ctx, query, args...)
	if err != nil && tx.heldErr == nil {
		tx.heldErr = err
	}
	return err
}

// ExecContext, QueryContext, QueryRowContext and StmtContext are sql.Tx's, after what is
// held is written.

func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	tx.flush(ctx) // a failure fails the query, and is kept for the end
	return tx.Tx.QueryRowContext(ctx, query, args...)
}

func (tx *Tx) StmtContext(ctx context.Context, stmt *sql.Stmt) *sql.Stmt {
	if tx.db.pg {
		// It would run outside the transaction, whose BEGIN goes with its first statement
		// through pgConn (see pgbegin.go): PostgreSQL's statements run by their text.
		panic("store: a prepared statement in a transaction on PostgreSQL")
	}
	tx.flush(ctx) // as QueryRowContext
	return tx.Tx.StmtContext(ctx, stmt)
}

// hotQueryRow and hotExec run a statement prepared on SQLite (stmt), or on PostgreSQL by its
// text, query (see statements).
func (tx *Tx) hotQueryRow(ctx context.Context, stmt *sql.Stmt, query string, args ...any) *sql.Row {
	if tx.db.pg {
		return tx.QueryRowContext(ctx, query, args...)
	}
	return tx.StmtContext(ctx, stmt).QueryRowContext(ctx, args...)
}

func (tx *Tx) hotExec(ctx context.Context, stmt *sql.Stmt, query string, args ...any) (sql.Result, error) {
	if tx.db.pg {
		return tx.ExecContext(ctx, query, args...)
	}
	return tx.StmtContext(ctx, stmt).ExecContext(ctx, args...)
}
