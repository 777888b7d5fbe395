-- instances: as SQLite's 0019_instances.sql, for several instances on one database. An
-- instance's lease ends at expires_at, by the database's clock: each renews its own with
-- its own --lease, and the others judge it by the same clock.
CREATE TABLE instances (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL DEFAULT '',
	started_at TEXT NOT NULL,
	seen_at    TEXT NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
ALTER TABLE steps ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE draft_batches ADD COLUMN owner TEXT NOT NULL DEFAULT '';
-- The instance sending a notification (see DueNotifications): '' when none is.
ALTER TABLE notifications ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
CREATE INDEX steps_owner ON steps (owner) WHERE state IN ('queued', 'started');

-- A change of access reaches every instance at once, before any event committed after it.
CREATE OR REPLACE FUNCTION parley_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE auth_changes SET n = n + 1;
	-- The channel of the schema, as the store names it (a hash when the name is too long).
	PERFORM pg_notify(CASE WHEN octet_length('parley:' || current_schema()) <= 63 THEN 'parley:' || current_schema()
		ELSE 'parley:' || left(encode(sha256(convert_to(current_schema(), 'UTF8')), 'hex'), 32) END, 'a');
	RETURN NULL;
END $$;
