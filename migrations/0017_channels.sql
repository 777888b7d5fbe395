-- channels are where word of a question reaches people outside the tab: a webhook (a JSON
-- POST, Slack and Mattermost compatible) or an email address, of a person (their settings)
-- or of a group (its page). The last delivery's outcome is kept to be shown there.
CREATE TABLE channels (
	id            INTEGER PRIMARY KEY,
	user_id       INTEGER REFERENCES users (id) ON DELETE CASCADE,
	group_id      INTEGER REFERENCES groups (id) ON DELETE CASCADE,
	kind          TEXT NOT NULL CHECK (kind IN ('webhook', 'email')),
	target        TEXT NOT NULL,
	created_at    TEXT NOT NULL,
	last_ok_at    TEXT,
	last_error    TEXT NOT NULL DEFAULT '',
	last_error_at TEXT,
	CHECK ((user_id IS NULL) <> (group_id IS NULL))
);
CREATE INDEX channels_user ON channels (user_id);
CREATE INDEX channels_group ON channels (group_id);

-- notifications are the outbox: one per channel and question asked (or escalated), written
-- in the transaction that asked, so that a crash loses none; a sender delivers them,
-- retrying with backoff, and skips the questions resolved meanwhile.
CREATE TABLE notifications (
	id          INTEGER PRIMARY KEY,
	channel_id  INTEGER NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
	question_id INTEGER NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
	reason      TEXT NOT NULL CHECK (reason IN ('asked', 'escalated')),
	state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'skipped')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     TEXT NOT NULL,
	last_error  TEXT NOT NULL DEFAULT '',
	created_at  TEXT NOT NULL
);
CREATE INDEX notifications_due ON notifications (state, next_at);

-- escalate_at is when a question still pending is added to its escalation's audience
-- (Question.Escalate); cleared once done.
ALTER TABLE questions ADD COLUMN escalate_at TEXT;
CREATE INDEX questions_escalate ON questions (escalate_at) WHERE escalate_at IS NOT NULL;
