package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A write transaction on PostgreSQL costs a round trip for its BEGIN, one a statement, and
// one for its COMMIT. pgConn's transactions save some of them:
//   - the BEGIN goes in one batch with the first statement (see pgbegin.go);
//   - the statements the store sends with the COMMIT (its notification, the writes it held
//     to the end: see atCommit) go in one batch with it: one round trip for all.

// beginSQL begins a transaction alone (see pgTx.begin).
const beginSQL = `BEGIN`

// atCommitKey marks the context of an ExecContext sent with the COMMIT.
type atCommitKey struct{}

// atCommit marks ctx so that an ExecContext in a transaction of pgConn's is not sent then,
// but in one batch with the COMMIT: for a write whose outcome the transaction does not read
// (its RowsAffected is 0), and whose failure fails the COMMIT.
func atCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, atCommitKey{}, true)
}

// BeginTx begins a transaction of the store's default kind: its BEGIN (see beginSQL) goes
// with its first statement (see pgbegin.go). Any other kind begins as pgx begins it.
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	c.tx = &pgTx{c: c, ctx: ctx}
	return c.tx, nil
}

// pgTx is a transaction begun by pgConn.BeginTx.
type pgTx struct {
	c   *pgConn
	ctx context.Context
	// begun says its BEGIN has been sent; broken why it never was, when its first statement
	// failed before (its later statements fail for it, rather than run outside it).
	begun  bool
	broken error
	// atCommit are the statements sent with the COMMIT, in order.
	atCommit []pgExec
}

// pgExec is a statement and its arguments.
type pgExec struct {
	sql  string
	args []any
}

// hold keeps an ExecContext that atCommit marked for the COMMIT, and reports whether it did.
func (t *pgTx) hold(ctx context.Context, query string, args []driver.NamedValue) bool {
	if ctx.Value(atCommitKey{}) == nil {
		return false
	}
	t.atCommit = append(t.atCommit, pgExec{sql: query, args: namedValues(args)})
	return true
}

// Commit sends the statements held for it, if any, and the COMMIT, in one batch (with the
// BEGIN, when nothing was sent before). A transaction that failed meanwhile is rolled back
// by its COMMIT, which says ROLLBACK: that is an error too. A connection left in a
// transaction by a failure is closed (see settle).
func (t *pgTx) Commit() (err error) {
	defer t.end()
	defer t.settle(&err)
	if t.broken != nil {
		return t.broken
	}
	conn := t.c.Conn.Conn()
	if !t.begun && len(t.atCommit) == 0 {
		return nil // it said nothing
	}
	if t.begun && len(t.atCommit) == 0 {
		tag, err := conn.Exec(t.ctx, `COMMIT`)
		return committed(tag.String(), err)
	}
	b := &pgconn.Batch{}
	if !t.begun {
		b = beginBatch()
	}
	for _, e := range t.atCommit {
		if err := t.c.statement(t.ctx, b, e.sql, e.args); err != nil {
			return err
		}
	}
	b.ExecParams(`COMMIT`, nil, nil, nil, nil)
	t.begun = true
	results, err := conn.PgConn().ExecBatch(t.ctx, b).ReadAll()
	if err != nil {
		return err
	}
	return committed(results[len(results)-1].CommandTag.String(), nil)
}

// committed is the outcome of a COMMIT that said tag.
func committed(tag string, err error) error {
	if err == nil && tag == "ROLLBACK" {
		err = errRolledBack
	}
	return err
}

var errRolledBack = errors.New("commit unexpectedly resulted in rollback")

// Rollback ends the transaction, unless it has ended already (a COMMIT that failed). It is
// sent whatever became of the transaction's context (a request gone: its locks must not
// stay held), within rollbackWithin.
func (t *pgTx) Rollback() (err error) {
	defer t.end()
	defer t.settle(&err)
	if !t.begun || t.c.Conn.Conn().PgConn().TxStatus() == 'I' {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), rollbackWithin)
	defer cancel()
	_, err = t.c.Conn.Conn().Exec(ctx, `ROLLBACK`)
	return err
}

// rollbackWithin bounds a ROLLBACK.
const rollbackWithin = 5 * time.Second

// settle closes the connection when the transaction's end failed and left it in a
// transaction (its context done before the COMMIT was sent, a connection lost): database/sql
// would hand it out again, holding the transaction's locks. pgx's own transactions do the
// same.
func (t *pgTx) settle(err *error) {
	if *err == nil {
		return
	}
	if conn := t.c.Conn.Conn(); !conn.IsClosed() && conn.PgConn().TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.Background(), rollbackWithin)
		defer cancel()
		conn.Close(ctx)
	}
}

func (t *pgTx) end() {
	if t.c.tx == t {
		t.c.tx = nil
	}
}
