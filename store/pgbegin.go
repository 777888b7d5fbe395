package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// A transaction of pgConn's sends its BEGIN with its first statement, in one batch: the
// BEGIN costs no round trip of its own. Until then nothing is sent: a transaction that says
// nothing costs none at all.

// beginBatch is a batch that begins the transaction.
func beginBatch() *pgconn.Batch {
	var b pgconn.Batch
	b.ExecParams(beginSQL, nil, nil, nil, nil)
	return &b
}

// beginResults is how many results beginBatch gives.
const beginResults = 1

// statement adds query, with args, to b: described once a connection (pgx keeps it), then
// sent by name, its arguments in text.
func (c *pgConn) statement(ctx context.Context, b *pgconn.Batch, query string, args []any) error {
	conn := c.Conn.Conn()
	sd, err := conn.Prepare(ctx, query, query)
	if err != nil {
		return err
	}
	if len(sd.ParamOIDs) != len(args) {
		return fmt.Errorf("%s: %d arguments for %d parameters", query, len(args), len(sd.ParamOIDs))
	}
	values := make([][]byte, len(args))
	for i, a := range args {
		if a == nil {
			continue
		}
		// Encoded after an empty buffer: empty text is not NULL.
		if values[i], err = conn.TypeMap().Encode(sd.ParamOIDs[i], pgtype.TextFormatCode, a, []byte{}); err != nil {
			return fmt.Errorf("%s: argument %d: %w", query, i+1, err)
		}
	}
	b.ExecStatement(sd, values, nil, nil)
	return nil
}

// begin sends the BEGIN alone, for what cannot go in a batch with it (a prepared statement
// of database/sql's).
func (t *pgTx) begin(ctx context.Context) error {
	if t.broken != nil {
		return t.broken
	}
	if t.begun {
		return nil
	}
	t.begun = true
	if _, err := t.c.Conn.Conn().Exec(ctx, beginSQL); err != nil {
		return t.fail(err)
	}
	return nil
}

// execFirst runs the transaction's first statement, an exec, in a batch with its BEGIN.
func (t *pgTx) execFirst(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	b := beginBatch()
	if err := t.c.statement(ctx, b, query, namedValues(args)); err != nil {
		return nil, t.fail(err)
	}
	t.begun = true
	results, err := t.c.Conn.Conn().PgConn().ExecBatch(ctx, b).ReadAll()
	if err != nil {
		return nil, t.fail(err)
	}
	return driver.RowsAffected(results[len(results)-1].CommandTag.RowsAffected()), nil
}

// fail notes the failure of the transaction's first statement: when it left no transaction
// open (it was never sent), the transaction is broken, and its later statements fail with it.
func (t *pgTx) fail(err error) error {
	if conn := t.c.Conn.Conn(); conn.IsClosed() || conn.PgConn().TxStatus() == 'I' {
		t.broken = fmt.Errorf("the transaction never began: %w", err)
	}
	return err
}

// queryFirst runs the transaction's first statement, a query, in a batch with its BEGIN, and
// returns its rows.
func (t *pgTx) queryFirst(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	b := beginBatch()
	if err := t.c.statement(ctx, b, query, namedValues(args)); err != nil {
		return nil, t.fail(err)
	}
	t.begun = true
	mrr := t.c.Conn.Conn().PgConn().ExecBatch(ctx, b)
	for range beginResults {
		if !mrr.NextResult() {
			return nil, t.fail(mrr.Close())
		}
		if _, err := mrr.ResultReader().Close(); err != nil {
			mrr.Close()
			return nil, t.fail(err)
		}
	}
	if !mrr.NextResult() {
		return nil, t.fail(mrr.Close())
	}
	rr := mrr.ResultReader()
	r := &pgRows{mrr: mrr, rr: rr}
	m := t.c.Conn.Conn().TypeMap()
	for _, fd := range rr.FieldDescriptions() {
		r.cols = append(r.cols, fd.Name)
		r.values = append(r.values, valueOf(m, fd.DataTypeOID, fd.Format))
	}
	return r, nil
}

func namedValues(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// pgRows are the rows of a query sent with the BEGIN, as database/sql takes them: each value
// the type pgx's own database/sql driver gives (see valueOf).
type pgRows struct {
	mrr    *pgconn.MultiResultReader
	rr     *pgconn.ResultReader
	cols   []string
	values []func([]byte) (driver.Value, error)
	closed bool
}

func (r *pgRows) Columns() []string { return r.cols }

func (r *pgRows) Next(dest []driver.Value) error {
	if !r.rr.NextRow() {
		if _, err := r.rr.Close(); err != nil {
			return err
		}
		return io.EOF
	}
	for i, raw := range r.rr.Values() {
		if raw == nil {
			dest[i] = nil
			continue
		}
		v, err := r.values[i](raw)
		if err != nil {
			return fmt.Errorf("convert field %d failed: %w", i, err)
		}
		dest[i] = v
	}
	return nil
}

func (r *pgRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	_, err := r.rr.Close()
	for r.mrr.NextResult() {
		if _, e := r.mrr.ResultReader().Close(); err == nil {
			err = e
		}
	}
	if e := r.mrr.Close(); err == nil {
		err = e
	}
	return err
}

// valueOf converts a column of type oid, sent in format, into the value pgx's database/sql
// driver (stdlib) gives for it: a test holds the two to the same values.
func valueOf(m *pgtype.Map, oid uint32, format int16) func([]byte) (driver.Value, error) {
	switch oid {
	case pgtype.BoolOID:
		return scanAs[bool](m, oid, format, func(d bool) (driver.Value, error) { return d, nil })
	case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.XMLOID:
		return scanAs[[]byte](m, oid, format, func(d []byte) (driver.Value, error) { return d, nil })
	case pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID:
		return scanAs[pgtype.Uint32](m, oid, format, pgtype.Uint32.Value)
	case pgtype.DateOID:
		return scanAs[pgtype.Date](m, oid, format, pgtype.Date.Value)
	case pgtype.Float4OID:
		return scanAs[float32](m, oid, format, func(d float32) (driver.Value, error) { return float64(d), nil })
	case pgtype.Float8OID:
		return scanAs[float64](m, oid, format, func(d float64) (driver.Value, error) { return d, nil })
	case pgtype.Int2OID:
		return scanAs[int16](m, oid, format, func(d int16) (driver.Value, error) { return int64(d), nil })
	case pgtype.Int4OID:
		return scanAs[int32](m, oid, format, func(d int32) (driver.Value, error) { return int64(d), nil })
	case pgtype.Int8OID:
		return scanAs[int64](m, oid, format, func(d int64) (driver.Value, error) { return d, nil })
	case pgtype.TimestampOID:
		return scanAs[pgtype.Timestamp](m, oid, format, pgtype.Timestamp.Value)
	case pgtype.TimestamptzOID:
		return scanAs[pgtype.Timestamptz](m, oid, format, pgtype.Timestamptz.Value)
	}
	return scanAs[string](m, oid, format, func(d string) (driver.Value, error) { return d, nil })
}

// scanAs scans a column into a T with the type map's plan for it, and gives value(T).
func scanAs[T any](m *pgtype.Map, oid uint32, format int16, value func(T) (driver.Value, error)) func([]byte) (driver.Value, error) {
	var d T
	plan := m.PlanScan(oid, format, &d)
	return func(src []byte) (driver.Value, error) {
		if err := plan.Scan(src, &d); err != nil {
			return nil, err
		}
		return value(d)
	}
}
