package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The first statement of a transaction on PostgreSQL goes in a batch with its BEGIN and is
// read by pgRows, not by pgx's database/sql driver: the values it gives are the driver's,
// column type for column type, row for row (a differential test: each query runs first in a
// transaction, then again in the same transaction, through the driver).
func TestPgBegin_FirstStatementReadsAsTheDriver(t *testing.T) {
	db := openInternal(t)
	if !db.pg {
		t.Skip("PostgreSQL's transactions")
	}
	ctx := context.Background()
	for _, q := range []string{
		`SELECT 1::int2, 2::int4, 3::int8, '-9223372036854775808'::int8, true, false, 'text'::text, 'Ci'::citext, ''::text, 'é ✓'::varchar`,
		`SELECT '\x00ff'::bytea, ''::bytea, 1.5::float4, 2.25::float8, 12.345::numeric, 'NaN'::float8`,
		`SELECT '2026-11-29 10:00:00.123456+00'::timestamptz, '2026-11-29 10:00:00'::timestamp, '2026-11-29'::date`,
		`SELECT '{"a":1}'::json, '{"b": [2]}'::jsonb, NULL::text, NULL::int8, NULL::bool, 42::oid, ARRAY[1,2], '1 day'::interval, 'c'::char`,
		`SELECT pg_advisory_xact_lock(1)`,
		`SELECT n, n::text, n % 2 = 0 FROM generate_series(1, 5) n`,
		`SELECT n FROM generate_series(1, 0) n`,
		`SELECT n, ? || '!', ?::text = '', ?::text IS NULL FROM generate_series(1, ?::int) n`,
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = []any{"arg", "", nil, 3}
		}
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		first := queryAll(t, tx, q, args)
		again := queryAll(t, tx, q, args)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		// Compared as Go syntax: NaN is NaN there, and a time says its zone.
		if fmt.Sprintf("%#v", first) != fmt.Sprintf("%#v", again) {
			t.Errorf("%s:\nwith the BEGIN %#v\nthrough pgx    %#v", q, first, again)
		}
	}
}

func queryAll(t *testing.T, tx *sql.Tx, q string, args []any) [][]any {
	t.Helper()
	rows, err := tx.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := [][]any{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// A transaction whose first statement fails (sent with its BEGIN) fails with that statement's
// error, commits nothing, and leaves its connection to serve the next; so does one whose
// first statement is an exec, and one that says nothing commits.
func TestPgBegin_FirstStatementFailsOrExecs(t *testing.T) {
	db := openInternal(t)
	if !db.pg {
		t.Skip("PostgreSQL's transactions")
	}
	ctx := context.Background()
	convID, runID := aRun(t, db)
	db.write.SetMaxOpenConns(1) // the next transactions take the connection the failure used
	err := db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET conversation_id = ? WHERE id = ?`, 1<<40, runID)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "foreign key") {
		t.Fatalf("first statement's failure: %v; want its foreign key error", err)
	}
	var n int64
	err = db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET state = 'first' WHERE id = ?`, runID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("an exec first: %d rows, %v; want 1", n, err)
	}
	if got := runState(t, db, runID); got != "first" {
		t.Errorf("run state %q; want the exec's", got)
	}
	if err := db.tx(ctx, func(tx *Tx) error { return nil }); err != nil {
		t.Errorf("a transaction that says nothing: %v", err)
	}
	if err := db.tx(ctx, func(tx *Tx) error {
		var id int64
		return tx.QueryRowContext(ctx, `SELECT id FROM conversations WHERE id = ?`, convID).Scan(&id)
	}); err != nil {
		t.Errorf("a query first, after all that: %v", err)
	}
}

// A transaction whose request goes away between its statements rolls back all the same:
// its connection does not go back to the pool holding the conversation's lock.
func TestPgTx_CancelledReleasesItsLocks(t *testing.T) {
	db := openInternal(t)
	if !db.pg {
		t.Skip("PostgreSQL's transactions")
	}
	bg := context.Background()
	convID, _ := aRun(t, db)
	for range 5 {
		ctx, cancel := context.WithCancel(bg)
		err := db.tx(ctx, func(tx *Tx) error {
			if err := tx.lockConversation(ctx, convID); err != nil {
				return err
			}
			cancel() // the request goes away
			_, err := tx.ExecContext(ctx, `SELECT 1`)
			return err
		})
		if err == nil {
			t.Fatal("a cancelled transaction committed")
		}
		// Another takes the lock at once (NOWAIT: an error if it is still held).
		if err := db.tx(bg, func(tx *Tx) error {
			_, err := tx.ExecContext(bg, `SELECT 1 FROM conversations WHERE id = ? FOR UPDATE NOWAIT`, convID)
			return err
		}); err != nil {
			t.Fatalf("the conversation's lock after a cancelled transaction: %v; want it released", err)
		}
	}
}

// A transaction whose first statement was never sent (an argument it cannot send) is
// broken: its later statements fail, rather than run and commit outside it.
func TestPgTx_FirstStatementUnsent(t *testing.T) {
	db := openInternal(t)
	if !db.pg {
		t.Skip("PostgreSQL's transactions")
	}
	ctx := context.Background()
	_, runID := aRun(t, db)
	before := runState(t, db, runID)
	err := db.tx(ctx, func(tx *Tx) error {
		var n int
		tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, struct{ x chan int }{}).Scan(&n) // fails before sending
		_, err := tx.ExecContext(ctx, `UPDATE runs SET state = 'leaked' WHERE id = ?`, runID)
		if err == nil {
			return errors.New("the update after the unsent statement ran")
		}
		return err
	})
	if err == nil {
		t.Fatal("the transaction committed")
	}
	if got := runState(t, db, runID); got != before {
		t.Errorf("run state %q; want %q: nothing of the broken transaction committed", got, before)
	}
}
