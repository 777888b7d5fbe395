-- Channels reach people wherever they are (see SQLite's 0024_channels_reach.sql): ntfy
-- topics and Web Push subscriptions, a channel's secret and label, email confirmation,
-- muted agents, quiet hours, and the keys Parley makes for itself.
ALTER TABLE channels DROP CONSTRAINT channels_kind_check;
ALTER TABLE channels ADD CONSTRAINT channels_kind_check CHECK (kind IN ('webhook', 'email', 'ntfy', 'push'));
ALTER TABLE channels ADD COLUMN secret TEXT NOT NULL DEFAULT '';
ALTER TABLE channels ADD COLUMN label TEXT NOT NULL DEFAULT '';
ALTER TABLE channels ADD COLUMN confirmed_at TEXT;
ALTER TABLE channels ADD COLUMN confirm_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE channels ADD COLUMN confirm_until TEXT;
UPDATE channels SET confirmed_at = created_at;
CREATE UNIQUE INDEX channels_push ON channels (target) WHERE kind = 'push';

CREATE TABLE muted_agents (
	user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	agent   TEXT NOT NULL,
	PRIMARY KEY (user_id, agent)
);

ALTER TABLE users ADD COLUMN quiet_from BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN quiet_to BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN quiet_zone TEXT NOT NULL DEFAULT '';

CREATE TABLE server_keys (
	name       TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	created_at TEXT NOT NULL
);
