-- instances: as SQLite's 0019_instances.sql, for several instances on one database.
CREATE TABLE instances (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL DEFAULT '',
	started_at TEXT NOT NULL,
	seen_at    TEXT NOT NULL
);
ALTER TABLE steps ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE draft_batches ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX steps_owner ON steps (owner) WHERE state IN ('queued', 'started');

-- A change of access reaches every instance at once, before any event committed after it.
CREATE OR REPLACE FUNCTION parley_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE auth_changes SET n = n + 1;
	PERFORM pg_notify('parley:' || current_schema(), 'a');
	RETURN NULL;
END $$;
