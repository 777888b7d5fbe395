// Package migrations holds Parley's SQL schema as numbered, forward-only files embedded in the binary.
package migrations

import "embed"

// FS holds the migration files, applied in name order by the store at start.
//
//go:embed *.sql
var FS embed.FS
