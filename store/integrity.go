package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/parley-chat/parley/domain"
)

// CheckTimeout bounds the check of a database file at start. A file so large that SQLite's
// quick_check has not finished by then is not held up for it: Parley starts without the
// check and warns, since damage it would have found still shows the moment it is read.
const CheckTimeout = 30 * time.Second

// quoted is how many of quick_check's findings a refusal quotes.
const quoted = 4

// damageError is a database file that SQLite finds damaged.
type damageError struct {
	path     string
	findings []string // quick_check's, or the error SQLite returned
}

func (e *damageError) Error() string {
	found, more := e.findings, ""
	if len(found) > quoted {
		found, more = found[:quoted], fmt.Sprintf("; and %d more", len(found)-quoted)
	}
	p := e.path
	return fmt.Sprintf("database %s is damaged: SQLite's quick_check found: %s%s. Parley leaves the file as it is and does not start on it. "+
		"Restore your latest backup (see \"Your data\" in docs/operations.md): move %s, and any %s-wal and %s-shm, aside and copy the backup in its place. "+
		"Without a backup, as a last resort, copy what can still be read into a new file with sqlite3 %s .recover | sqlite3 recovered.db, and start Parley on that one",
		p, strings.Join(found, "; "), more, p, p, p, p)
}

// checkIntegrity checks the database file at path before Parley uses it (see quickCheck),
// unless opts skip it. A command that shares the database with a running server
// (opts.Shared) is not held up by it: the server checked the file.
func checkIntegrity(ctx context.Context, path string, opts Options) error {
	if opts.SkipCheck || opts.Shared {
		return nil
	}
	return quickCheck(ctx, path, CheckTimeout, opts.Logger)
}

// quickCheck runs SQLite's quick_check over the database file at path, without changing it
// (the caller holds the lock), and returns a *damageError when the file is damaged. A new or
// empty file, or one that is not SQLite, passes: checkFile says what it is. A check that runs
// past timeout is interrupted and counts as passed, with a warning on log.
func quickCheck(ctx context.Context, path string, timeout time.Duration, log *slog.Logger) error {
	if !hasSQLiteHeader(path) {
		return nil
	}
	q := url.Values{"mode": {"ro"}}
	if wal, err := os.Stat(path + "-wal"); err != nil || wal.Size() == 0 {
		q.Set("immutable", "1")
	}
	ro, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer ro.Close()
	bounded, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	started := time.Now()
	findings, err := quickCheckFindings(bounded, ro)
	switch {
	case damaged(err):
		return &damageError{path: path, findings: append(findings, err.Error())}
	case err == nil && len(findings) == 1 && findings[0] == "ok":
		return nil
	case err == nil:
		return &damageError{path: path, findings: findings}
	case ctx.Err() != nil:
		return fmt.Errorf("check %s: %w", path, ctx.Err())
	case bounded.Err() != nil:
		if log == nil {
			log = slog.Default()
		}
		log.Warn("database not checked: SQLite's quick_check did not finish in time, and Parley starts without it",
			"db", path, "after", time.Since(started).Round(time.Millisecond),
			"check", fmt.Sprintf("sqlite3 %s \"PRAGMA quick_check\", while Parley is stopped", path))
		return nil
	}
	return fmt.Errorf("check %s: %w", path, err)
}

// quickCheckFindings runs quick_check on ro and returns what it reported, line by line, even
// when it ends with an error (a table it cannot read at all): its findings until then.
func quickCheckFindings(ctx context.Context, ro *sql.DB) ([]string, error) {
	rows, err := ro.QueryContext(ctx, `PRAGMA quick_check(100)`) // at most 100 findings
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var findings []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return findings, err
		}
		for line := range strings.SplitSeq(r, "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "*** in database") {
				findings = append(findings, line)
			}
		}
	}
	return findings, rows.Err()
}

// hasSQLiteHeader reports whether the file at path begins as an SQLite database does.
func hasSQLiteHeader(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, sqliteHeader)
}

// damaged reports whether err is SQLite finding the database file damaged, or not a
// database at all.
func damaged(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB)
}

// damageMessage is what a person reads once SQLite has found the database file damaged
// under a running Parley: the health check's reason, and the answer to the request that
// found it.
func damageMessage(cause error) *domain.Error {
	return domain.Errorf(domain.EUNAVAILABLE, "Parley's database file is damaged (%s). Stop Parley and restore the file from your latest backup, "+
		"or as a last resort recover what can still be read with sqlite3's .recover (see \"Your data\" in docs/operations.md).", sqliteCause(cause))
}

// sqliteCause is SQLite's own words for err ("database disk image is malformed").
func sqliteCause(err error) string {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code.Error()
	}
	return err.Error()
}

// noteDamage remembers that SQLite found the database file damaged, when err says so: from
// then on Writable reports it, whatever else succeeds. It returns the error a person should
// read: the damage, or err as it was.
func (db *DB) noteDamage(err error) error {
	if !damaged(err) {
		return err
	}
	var sf *storageFailure
	if !errors.As(err, &sf) {
		err = &storageFailure{msg: damageMessage(err), cause: err}
	}
	db.health.damage.CompareAndSwap(nil, &writeFailure{at: db.Now().UnixNano(), err: err})
	return err
}

// Failed is what a request that failed on the database should answer: when SQLite found the
// file damaged, an EUNAVAILABLE error that says so and how to restore it (from then on the
// health check reports it too); any other error as it is. Writes note the damage themselves;
// the server hands this the errors of reads.
func (db *DB) Failed(err error) error { return db.noteDamage(err) }
