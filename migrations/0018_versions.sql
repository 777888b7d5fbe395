-- Versions: regenerating a reply or editing a message already sent branches the conversation
-- (agent.Version). The log loses nothing: each event and run belongs to a version, and a
-- version shows the events of the one it branched from up to its fork, then its own.
-- conversations.version is the version shown; version 0 (the conversation as first written)
-- has a row once the conversation has branched.
CREATE TABLE versions (
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	n               INTEGER NOT NULL,
	parent          INTEGER NOT NULL DEFAULT 0,
	fork            INTEGER NOT NULL DEFAULT 0,
	reason          TEXT NOT NULL DEFAULT '',
	created_by      TEXT NOT NULL DEFAULT '',
	created_at      TEXT NOT NULL,
	chosen_at       TEXT NOT NULL,
	PRIMARY KEY (conversation_id, n)
);
ALTER TABLE conversations ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN version INTEGER NOT NULL DEFAULT 0;

-- Messages a person sent while the agent worked, waiting for the run to end (their
-- message_queued events record them; a user_message naming one records it sent, a
-- message_unqueued its removal). documents are the refs of the files sent with it.
CREATE TABLE queued_messages (
	event_id        INTEGER PRIMARY KEY REFERENCES events (id),
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	author          TEXT NOT NULL,
	text            TEXT NOT NULL,
	nonce           TEXT NOT NULL DEFAULT '',
	documents       TEXT NOT NULL DEFAULT '[]',
	created_at      TEXT NOT NULL
);
CREATE INDEX queued_messages_conversation ON queued_messages (conversation_id, event_id);
