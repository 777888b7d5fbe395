-- Channels reach people wherever they are: besides webhooks and email, ntfy topics and the
-- Web Push subscriptions of their devices. A channel keeps what delivering needs besides its
-- target (secret: an ntfy token, a subscription's keys), a device's label, and, for an email
-- address, when it was confirmed by the link mailed to it (nothing goes to it before; the
-- addresses added before this were in use already, and count as confirmed). SQLite cannot
-- change a CHECK, so the table is made again, and the outbox with it (its key refers to it).
CREATE TABLE channels_new (
	id            INTEGER PRIMARY KEY,
	user_id       INTEGER REFERENCES users (id) ON DELETE CASCADE,
	group_id      INTEGER REFERENCES groups (id) ON DELETE CASCADE,
	kind          TEXT NOT NULL CHECK (kind IN ('webhook', 'email', 'ntfy', 'push')),
	target        TEXT NOT NULL,
	secret        TEXT NOT NULL DEFAULT '',
	label         TEXT NOT NULL DEFAULT '',
	created_at    TEXT NOT NULL,
	confirmed_at  TEXT,
	confirm_hash  TEXT NOT NULL DEFAULT '',
	confirm_until TEXT,
	last_ok_at    TEXT,
	last_error    TEXT NOT NULL DEFAULT '',
	last_error_at TEXT,
	CHECK ((user_id IS NULL) <> (group_id IS NULL))
);
INSERT INTO channels_new (id, user_id, group_id, kind, target, created_at, confirmed_at, last_ok_at, last_error, last_error_at)
	SELECT id, user_id, group_id, kind, target, created_at, created_at, last_ok_at, last_error, last_error_at FROM channels;

CREATE TABLE notifications_new (
	id          INTEGER PRIMARY KEY,
	channel_id  INTEGER NOT NULL REFERENCES channels_new (id) ON DELETE CASCADE,
	question_id INTEGER NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
	reason      TEXT NOT NULL CHECK (reason IN ('asked', 'escalated')),
	state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'skipped')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     TEXT NOT NULL,
	last_error  TEXT NOT NULL DEFAULT '',
	created_at  TEXT NOT NULL
);
INSERT INTO notifications_new SELECT id, channel_id, question_id, reason, state, attempts, next_at, last_error, created_at FROM notifications;

DROP TABLE notifications;
DROP TABLE channels;
ALTER TABLE channels_new RENAME TO channels;
ALTER TABLE notifications_new RENAME TO notifications;
CREATE INDEX channels_user ON channels (user_id);
CREATE INDEX channels_group ON channels (group_id);
CREATE UNIQUE INDEX channels_push ON channels (target) WHERE kind = 'push';
CREATE INDEX notifications_due ON notifications (state, next_at);

-- The agents whose questions a person does not want word of outside Parley ('' for agents
-- outside Parley, over MCP); none by default.
CREATE TABLE muted_agents (
	user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	agent   TEXT NOT NULL,
	PRIMARY KEY (user_id, agent)
);

-- Quiet hours, in minutes after midnight in quiet_zone: word of questions waits in them.
ALTER TABLE users ADD COLUMN quiet_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN quiet_to INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN quiet_zone TEXT NOT NULL DEFAULT '';

-- Keys Parley makes for itself at first start and keeps: the VAPID key pair of Web Push.
CREATE TABLE server_keys (
	name       TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	created_at TEXT NOT NULL
);
