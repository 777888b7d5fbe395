package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/parley-chat/parley/store"
)

const migrateToUsage = "parley migrate-to [--db ./parley.db] postgres://user@host/db"

// runMigrateTo is `parley migrate-to`: it moves an install from its SQLite file to a new,
// empty PostgreSQL database, everything in one transaction, and says how much of each table
// it copied. The file is left as it was, a backup.
func runMigrateTo(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	fset := flag.NewFlagSet("migrate-to", flag.ContinueOnError)
	fset.SetOutput(std.err)
	dbPath := fset.String("db", envOr(getenv, "PARLEY_DB", "./parley.db"), "the SQLite database file to copy (PARLEY_DB)")
	target, rest, err := nameAndFlags(fset, args)
	switch {
	case err != nil:
		return err
	case len(rest) > 0:
		return fmt.Errorf("migrate-to: unexpected argument %q (usage: %s)", rest[0], migrateToUsage)
	case target == "":
		return fmt.Errorf("migrate-to: name the PostgreSQL database to move to (usage: %s)", migrateToUsage)
	case !store.IsPostgres(target):
		return fmt.Errorf("migrate-to: the database to move to is a postgres:// URL (usage: %s)", migrateToUsage)
	case store.IsPostgres(*dbPath):
		return fmt.Errorf("migrate-to: --db names the SQLite file to copy, not a PostgreSQL database (usage: %s)", migrateToUsage)
	}
	// Opening would make a new, empty file: nothing to move.
	if _, err := os.Stat(*dbPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("migrate-to: no SQLite database at %s: name it with --db or PARLEY_DB", *dbPath)
	}
	// For this process alone: a server writing meanwhile would lose what it writes.
	from, err := store.OpenWith(ctx, *dbPath, store.Options{Holder: "parley migrate-to"})
	if err != nil {
		return fmt.Errorf("migrate-to: %w", err)
	}
	defer from.Close()
	shown := store.Describe(target)
	to, err := store.Open(ctx, target)
	if err != nil {
		return fmt.Errorf("migrate-to: %w", err)
	}
	defer to.Close()
	counts, err := store.CopyTo(ctx, from, to)
	if err != nil {
		return fmt.Errorf("migrate-to %s: %w", shown, err)
	}
	fmt.Fprintf(std.out, "copied %s to %s:\n", *dbPath, shown)
	width := 0
	for _, c := range counts {
		width = max(width, len(c.Table)+1)
	}
	for _, c := range counts {
		fmt.Fprintf(std.out, "  %-*s %d\n", width, c.Table+":", c.Rows)
	}
	fmt.Fprintf(std.out, "The search index was rebuilt from what was copied. %s is unchanged: keep it as a backup.\n", *dbPath)
	fmt.Fprintf(std.out, "Start Parley on the new database (with its password, if it has one):\n  parley serve --db '%s'\n", shown)
	return nil
}
