-- Streamed text no longer goes into the event log token by token: it reaches streams through
-- memory, is stored in batches as drafts while a message is written, and the finished message
-- replaces them. The log holds one row per message.
CREATE TABLE drafts (
	id              INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	run_id          INTEGER NOT NULL REFERENCES runs (id),
	message_id      TEXT NOT NULL,
	author          TEXT NOT NULL DEFAULT '',
	text            TEXT NOT NULL,
	created_at      TEXT NOT NULL
);
CREATE INDEX drafts_conversation ON drafts (conversation_id, id);

-- The text deltas of a message that never finished (a crash the next start has not
-- recovered yet) become its drafts; the others are in their finished message already.
CREATE TEMP TABLE finished_messages AS
	SELECT DISTINCT conversation_id, json_extract(CAST(payload AS TEXT), '$.message_id') AS message_id
	FROM events WHERE kind = 'agent_message' AND json_valid(CAST(payload AS TEXT));
CREATE INDEX temp.finished_messages_id ON finished_messages (conversation_id, message_id);
INSERT INTO drafts (conversation_id, run_id, message_id, author, text, created_at)
SELECT d.conversation_id, d.run_id, json_extract(CAST(d.payload AS TEXT), '$.message_id'),
	coalesce(json_extract(CAST(d.payload AS TEXT), '$.author'), ''),
	coalesce(json_extract(CAST(d.payload AS TEXT), '$.text'), ''), d.created_at
FROM events d
WHERE d.kind = 'text_delta' AND d.run_id IS NOT NULL AND json_valid(CAST(d.payload AS TEXT))
	AND NOT EXISTS (SELECT 1 FROM finished_messages f WHERE f.conversation_id = d.conversation_id
		AND f.message_id = json_extract(CAST(d.payload AS TEXT), '$.message_id'))
ORDER BY d.id;
DROP TABLE temp.finished_messages;
DELETE FROM events WHERE kind = 'text_delta';
