// Package migrations holds Parley's SQL schema as numbered, forward-only files embedded in the binary.
package migrations

import "embed"

// FS holds the SQLite migration files, applied in name order by the store at start.
//
//go:embed *.sql
var FS embed.FS

// Postgres holds the PostgreSQL migration files (postgres/*.sql), applied in name order by
// the instance that holds the migration lock, while the others wait.
//
//go:embed postgres/*.sql
var Postgres embed.FS
