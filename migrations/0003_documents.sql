-- Documents: files people attach, blocks intake splits off a message, files given as answers.
ALTER TABLE conversations ADD COLUMN language TEXT NOT NULL DEFAULT '';

CREATE TABLE documents (
	id              INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	-- message_event_id is the person's message the document is attached to (upload, user_context).
	message_event_id INTEGER REFERENCES events (id),
	-- question_id is the question a document answered (label answer).
	question_id     INTEGER REFERENCES questions (id),
	label           TEXT NOT NULL CHECK (label IN ('upload', 'user_context', 'answer')),
	name            TEXT NOT NULL,
	title           TEXT NOT NULL DEFAULT '',
	mime_type       TEXT NOT NULL,
	size            INTEGER NOT NULL,
	sha256          TEXT NOT NULL,
	content         BLOB NOT NULL,
	created_at      TEXT NOT NULL
);
CREATE INDEX documents_conversation ON documents (conversation_id, id);
CREATE INDEX documents_message ON documents (message_event_id);
