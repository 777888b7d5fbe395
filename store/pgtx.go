package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// A write transaction on PostgreSQL costs a round trip for its BEGIN, one a statement, and
// one for its COMMIT. pgConn's transactions save some of them:
//   - BEGIN goes with the setting of the transaction (see beginSQL), in one message of the
//     simple query protocol, which may hold several statements;
//   - the statements the store sends with the COMMIT (its notification, the writes it held
//     to the end: see atCommit) go in one batch with it: one round trip for all.

// beginSQL begins a transaction of the store's. Its statements are the store's few and fixed
// ones, each run many times on each connection: they are planned once a connection, for any
// values (a generic plan), rather than again for each call's values until PostgreSQL decides
// a generic plan would do. In a burst of answers (see docs/benchmarks.md) the first resumed
// token came 1% to 30% sooner so, in each of five runs side by side.
const beginSQL = `BEGIN; SET LOCAL plan_cache_mode = force_generic_plan`

// atCommitKey marks the context of an ExecContext sent with the COMMIT.
type atCommitKey struct{}

// atCommit marks ctx so that an ExecContext in a transaction of pgConn's is not sent then,
// but in one batch with the COMMIT: for a write whose outcome the transaction does not read
// (its RowsAffected is 0), and whose failure fails the COMMIT.
func atCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, atCommitKey{}, true)
}

// BeginTx begins a transaction of the store's default kind with beginSQL, in one round trip;
// any other kind as pgx begins it.
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	if _, err := c.Conn.Conn().Exec(ctx, beginSQL); err != nil {
		return nil, err
	}
	c.tx = &pgTx{c: c, ctx: ctx}
	return c.tx, nil
}

// pgTx is a transaction begun by pgConn.BeginTx.
type pgTx struct {
	c   *pgConn
	ctx context.Context
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
	e := pgExec{sql: query, args: make([]any, len(args))}
	for i, a := range args {
		e.args[i] = a.Value
	}
	t.atCommit = append(t.atCommit, e)
	return true
}

// Commit sends the statements held for it, if any, and the COMMIT, in one batch. A
// transaction that failed meanwhile is rolled back by its COMMIT, which says ROLLBACK: that
// is an error too.
func (t *pgTx) Commit() error {
	defer t.end()
	conn := t.c.Conn.Conn()
	if len(t.atCommit) == 0 {
		tag, err := conn.Exec(t.ctx, `COMMIT`)
		return committed(tag.String(), err)
	}
	var b pgconn.Batch
	for _, e := range t.atCommit {
		// Described once a connection (pgx keeps it), then sent by name.
		sd, err := conn.Prepare(t.ctx, e.sql, e.sql)
		if err != nil {
			return err
		}
		if len(sd.ParamOIDs) != len(e.args) {
			return fmt.Errorf("%s: %d arguments for %d parameters", e.sql, len(e.args), len(sd.ParamOIDs))
		}
		values := make([][]byte, len(e.args))
		for i, a := range e.args {
			if a == nil {
				continue
			}
			if values[i], err = conn.TypeMap().Encode(sd.ParamOIDs[i], pgtype.TextFormatCode, a, nil); err != nil {
				return fmt.Errorf("%s: argument %d: %w", e.sql, i+1, err)
			}
		}
		b.ExecStatement(sd, values, nil, nil)
	}
	b.ExecParams(`COMMIT`, nil, nil, nil, nil)
	results, err := conn.PgConn().ExecBatch(t.ctx, &b).ReadAll()
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

// Rollback ends the transaction, unless it has ended already (a COMMIT that failed).
func (t *pgTx) Rollback() error {
	defer t.end()
	if t.c.Conn.Conn().PgConn().TxStatus() == 'I' {
		return nil
	}
	_, err := t.c.Conn.Conn().Exec(t.ctx, `ROLLBACK`)
	return err
}

func (t *pgTx) end() {
	if t.c.tx == t {
		t.c.tx = nil
	}
}
