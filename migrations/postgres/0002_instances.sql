-- instances: as SQLite's 0019_instances.sql, for several instances on one database.
CREATE TABLE instances (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL DEFAULT '',
	started_at TEXT NOT NULL,
	seen_at    TEXT NOT NULL
);
ALTER TABLE steps ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE draft_batches ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE questions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX steps_owner ON steps (owner) WHERE state IN ('queued', 'started');
