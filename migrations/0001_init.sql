-- Conversations are append-only event logs; the other tables are the ledger the runner works from.
CREATE TABLE conversations (
	id         INTEGER PRIMARY KEY,
	agent      TEXT NOT NULL,
	title      TEXT NOT NULL,
	state      TEXT NOT NULL DEFAULT '',
	-- nonce is the start form's one-time token: a double click finds the conversation here.
	nonce      TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX conversations_updated ON conversations (updated_at DESC, id DESC);
CREATE UNIQUE INDEX conversations_nonce ON conversations (nonce) WHERE nonce <> '';

CREATE TABLE runs (
	id              INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	state           TEXT NOT NULL,
	-- nonce is the composer's one-time token: a re-sent message finds its run here.
	nonce           TEXT NOT NULL DEFAULT '',
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL
);
CREATE INDEX runs_conversation ON runs (conversation_id, id);
CREATE UNIQUE INDEX runs_nonce ON runs (conversation_id, nonce) WHERE nonce <> '';

CREATE TABLE events (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	run_id          INTEGER REFERENCES runs (id),
	kind            TEXT NOT NULL,
	payload         TEXT NOT NULL,
	created_at      TEXT NOT NULL
);
CREATE INDEX events_conversation ON events (conversation_id, id);

-- A step is one invocation of an agent: for a message, a resume after answers, or a retry.
CREATE TABLE steps (
	id          INTEGER PRIMARY KEY,
	run_id      INTEGER NOT NULL REFERENCES runs (id),
	trigger     TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('queued', 'started', 'done', 'failed', 'interrupted')),
	error       TEXT NOT NULL DEFAULT '',
	-- answers_seen is the newest answer id when the step began: answers after it came in
	-- while the step ran, and resume the run when it ends.
	answers_seen INTEGER NOT NULL DEFAULT 0,
	created_at  TEXT NOT NULL,
	started_at  TEXT,
	finished_at TEXT
);
CREATE INDEX steps_state ON steps (state, id);

CREATE TABLE questions (
	id              INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	run_id          INTEGER NOT NULL REFERENCES runs (id),
	event_id        INTEGER REFERENCES events (id),
	asker           TEXT NOT NULL,
	spec            TEXT NOT NULL,
	state           TEXT NOT NULL DEFAULT 'pending',
	deadline        TEXT,
	created_at      TEXT NOT NULL,
	resolved_at     TEXT
);
CREATE INDEX questions_pending ON questions (state, deadline);
CREATE INDEX questions_run ON questions (run_id, state);

-- At most one resolution per question: a double submit finds the row already there.
CREATE TABLE answers (
	id          INTEGER PRIMARY KEY,
	question_id INTEGER NOT NULL UNIQUE REFERENCES questions (id),
	outcome     TEXT NOT NULL,
	vals        TEXT NOT NULL DEFAULT '{}',
	reason      TEXT NOT NULL DEFAULT '',
	answered_by TEXT NOT NULL DEFAULT '',
	created_at  TEXT NOT NULL
);
