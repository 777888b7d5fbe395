-- Tasks of Parley's own A2A server: each belongs to a conversation, so it survives restarts and
-- shows in the conversation list and to staff like any other conversation.
CREATE TABLE a2a_tasks (
	id              TEXT PRIMARY KEY,
	context_id      TEXT NOT NULL,
	agent           TEXT NOT NULL,
	conversation_id INTEGER REFERENCES conversations (id),
	task            TEXT NOT NULL DEFAULT '',
	updated_at      TEXT NOT NULL
);
CREATE INDEX a2a_tasks_context ON a2a_tasks (context_id, updated_at);
