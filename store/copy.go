package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// copyTables are the tables CopyTo copies, in an order their foreign keys allow: a row comes
// after the rows it refers to.
var copyTables = []string{
	"users", "groups", "group_members",
	"conversations", "runs", "events", "steps", "questions", "answers",
	"question_audience", "question_approvals", "inbound_requests",
	"documents", "versions", "queued_messages", "draft_batches",
	"a2a_clients", "a2a_tasks",
	"sessions", "api_tokens", "user_identities",
	"channels", "notifications", "muted_agents", "server_keys",
	"audit_log", "id_floor", "feedback", "feedback_reasons", "review_marks",
	"staff_notes", "labels", "conversation_labels",
}

// seeded are the tables a new database starts with rows in (its migrations' defaults): the
// copy replaces them, and they do not make the target count as holding data.
var seeded = map[string]bool{"feedback_reasons": true}

// notCopied are the SQLite tables CopyTo leaves behind, and why.
var notCopied = map[string]string{
	"search":            "the target's triggers index what is copied",
	"schema_migrations": "each database records its own",
	"auth_changes":      "the target has its own counter",
	"write_probe":       "/healthz rewrites it",
	"instances":         "the processes that served the file; those serving the target register themselves",
	"oidc_logins":       "sign-ins under way, minutes old: the browser starts again",
}

// ErrTargetNotEmpty is CopyTo refusing a database that already holds Parley's data.
var ErrTargetNotEmpty = errors.New("the target database is not empty")

// TableCount is how many rows of a table CopyTo copied.
type TableCount struct {
	Table string
	Rows  int64
}

// CopyTo copies everything Parley keeps in the SQLite database from into the PostgreSQL
// database to, which must be migrated and empty: it exists to move an install to
// PostgreSQL. Rows keep their ids, and each identity sequence is set past the highest, so
// that links, event ids and tokens stay valid. All of it happens in one transaction of to's:
// on any error nothing is copied. A non-empty to gives ErrTargetNotEmpty, unchanged.
func CopyTo(ctx context.Context, from, to *DB) ([]TableCount, error) {
	if from.pg || !to.pg {
		return nil, errors.New("copy: from a SQLite database into a PostgreSQL one only")
	}
	if err := checkCopyable(ctx, from.read); err != nil {
		return nil, err
	}
	// One read transaction: a snapshot, should a command sharing the file write meanwhile.
	src, err := from.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	defer src.Rollback()
	var counts []TableCount
	_, err = to.commit(ctx, func(w *Tx) error {
		dst := w.Tx
		if err := checkEmpty(ctx, dst); err != nil {
			return err
		}
		for _, table := range copyTables {
			n, err := copyTable(ctx, src, dst, table)
			if err != nil {
				return fmt.Errorf("copy %s: %w", table, err)
			}
			counts = append(counts, TableCount{table, n})
		}
		if err := orderSearch(ctx, dst); err != nil {
			return err
		}
		return setSequences(ctx, src, dst)
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}

// checkCopyable refuses a source holding a table CopyTo does not know (a newer Parley's):
// its rows would be lost.
func checkCopyable(ctx context.Context, q queryer) error {
	tables, err := queryColumn[string](ctx, q, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return fmt.Errorf("copy: read the tables: %w", err)
	}
	for _, t := range tables {
		_, skipped := notCopied[t]
		// search_data, search_idx, ...: FTS5's own tables behind search.
		shadow := strings.HasPrefix(t, "search_")
		if !skipped && !shadow && !slices.Contains(copyTables, t) {
			return fmt.Errorf("copy: the database has a table %s, which this Parley cannot copy: use the Parley that made it", t)
		}
	}
	return nil
}

// checkEmpty returns ErrTargetNotEmpty, saying what the database holds, unless every table
// CopyTo fills is empty.
func checkEmpty(ctx context.Context, tx *sql.Tx) error {
	var held []string
	for _, t := range copyTables {
		if seeded[t] {
			continue
		}
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
			return fmt.Errorf("copy: count %s: %w", t, err)
		}
		if n > 0 {
			held = append(held, fmt.Sprintf("%s: %d", t, n))
		}
	}
	if len(held) > 0 {
		return fmt.Errorf("%w (%s): copy into a new, empty database; nothing was changed", ErrTargetNotEmpty, strings.Join(held, ", "))
	}
	return nil
}

// copyTable copies a table's rows in rowid order (the order they were made, which the
// target's search index follows), as many to a statement as fit, and returns how many.
func copyTable(ctx context.Context, src, dst *sql.Tx, table string) (int64, error) {
	if seeded[table] {
		if _, err := dst.ExecContext(ctx, `DELETE FROM `+table); err != nil {
			return 0, err
		}
	}
	types, err := pgColumnTypes(ctx, dst, table)
	if err != nil {
		return 0, err
	}
	rows, err := src.QueryContext(ctx, `SELECT * FROM `+table+` ORDER BY rowid`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		if _, ok := types[c]; !ok {
			return 0, fmt.Errorf("the target has no column %s.%s", table, c)
		}
		quoted[i] = `"` + c + `"`
	}
	b := batch{
		insert: `INSERT INTO "` + table + `" (` + strings.Join(quoted, ", ") + `) VALUES `,
		tuple:  `(?` + strings.Repeat(", ?", len(cols)-1) + `)`,
		max:    max(1, min(500, 60000/len(cols))),
	}
	var n int64
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			vals[i] = asColumn(v, types[cols[i]])
			b.size += valueSize(vals[i])
		}
		b.args = append(b.args, vals...)
		b.rows++
		n++
		if b.rows == b.max || b.size > 8<<20 {
			if err := b.flush(ctx, dst); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, b.flush(ctx, dst)
}

// batch is the rows of one multi-row INSERT under way.
type batch struct {
	insert, tuple string
	max, rows     int
	size          int
	args          []any
}

func (b *batch) flush(ctx context.Context, tx *sql.Tx) error {
	if b.rows == 0 {
		return nil
	}
	query := b.insert + b.tuple + strings.Repeat(", "+b.tuple, b.rows-1)
	if _, err := tx.ExecContext(ctx, query, b.args...); err != nil {
		return err
	}
	b.rows, b.size, b.args = 0, 0, b.args[:0]
	return nil
}

// pgColumnTypes maps the columns of a table of the PostgreSQL database to their types.
func pgColumnTypes(ctx context.Context, tx *sql.Tx, table string) (map[string]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ?`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		types[name] = typ
	}
	if len(types) == 0 && rows.Err() == nil {
		return nil, fmt.Errorf("the target has no table %s", table)
	}
	return types, rows.Err()
}

// asColumn is a value read from SQLite, whose columns hold any type, as the PostgreSQL
// column of type typ takes it: bytes for bytea, text for text (old payloads were BLOBs).
func asColumn(v any, typ string) any {
	switch x := v.(type) {
	case string:
		if typ == "bytea" {
			return []byte(x)
		}
	case []byte:
		if typ != "bytea" {
			return string(x)
		}
	}
	return v
}

func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []byte:
		return len(x)
	}
	return 8
}

// setSequences sets the identity sequence of each table copied past the highest id it has
// given: its highest id, or for a table of SQLite's AUTOINCREMENT (events), the highest ever,
// so that an id deleted is not given again.
func setSequences(ctx context.Context, src, dst *sql.Tx) error {
	given := map[string]int64{}
	rows, err := src.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`)
	if err != nil {
		return fmt.Errorf("copy: read sqlite_sequence: %w", err)
	}
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			rows.Close()
			return err
		}
		given[name] = seq
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range copyTables {
		var seq sql.NullString
		err := dst.QueryRowContext(ctx, `SELECT pg_get_serial_sequence(c.table_name, c.column_name) FROM information_schema.columns c
			WHERE c.table_schema = current_schema() AND c.table_name = ? AND c.column_name = 'id'`, t).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) || err == nil && !seq.Valid {
			continue // no id, or one Parley gives itself (conversations)
		}
		if err != nil {
			return fmt.Errorf("copy: sequence of %s: %w", t, err)
		}
		var highest int64
		if err := src.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+t).Scan(&highest); err != nil {
			return fmt.Errorf("copy: highest id of %s: %w", t, err)
		}
		highest = max(highest, given[t])
		if highest == 0 {
			continue
		}
		if _, err := dst.ExecContext(ctx, `SELECT setval(?::regclass, ?)`, seq.String, highest); err != nil {
			return fmt.Errorf("copy: set the sequence of %s: %w", t, err)
		}
	}
	// Conversations take their ids from a sequence of their own (migrations/postgres/0010).
	if _, err := dst.ExecContext(ctx, `SELECT setval('conversation_ids', greatest(coalesce((SELECT max(id) FROM conversations), 0),
		coalesce((SELECT id FROM id_floor WHERE name = 'conversations'), 0)) + 1, false)`); err != nil {
		return fmt.Errorf("copy: set the sequence of conversations: %w", err)
	}
	return nil
}

// orderSearch renumbers the target's search index in the order things happened. Its
// triggers indexed table by table (every message, then every answer, then every document),
// and a search for a common word takes the newest matches by that number.
func orderSearch(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE search SET rowid = o.n + (SELECT coalesce(max(rowid), 0) FROM search)
		FROM (SELECT s.rowid AS old, row_number() OVER (ORDER BY coalesce(e.created_at, a.created_at, d.created_at), s.rowid) AS n
			FROM search s
			LEFT JOIN events e ON s.kind NOT IN ('answer', 'document') AND e.id = s.ref_id
			LEFT JOIN answers a ON s.kind = 'answer' AND a.question_id = s.ref_id
			LEFT JOIN documents d ON s.kind = 'document' AND d.id = s.ref_id) AS o
		WHERE search.rowid = o.old`)
	if err != nil {
		return fmt.Errorf("copy: order the search index: %w", err)
	}
	_, err = tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('search', 'rowid'), max(rowid)) FROM search HAVING count(*) > 0`)
	if err != nil {
		return fmt.Errorf("copy: set the sequence of search: %w", err)
	}
	return nil
}
