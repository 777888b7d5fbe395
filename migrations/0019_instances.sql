-- instances are the Parley processes serving the database, each renewing seen_at while it
-- lives. The steps it runs and the drafts it saves name it as their owner: when it stops renewing, another instance takes them over, as a restart does
-- after a crash (on SQLite, one process at a time: the one starting takes over everything).
CREATE TABLE instances (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL DEFAULT '',
	started_at TEXT NOT NULL,
	seen_at    TEXT NOT NULL
);
ALTER TABLE steps ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE draft_batches ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX steps_owner ON steps (owner) WHERE state IN ('queued', 'started');
