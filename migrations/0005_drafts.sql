-- Streamed text no longer goes into the event log token by token: it reaches streams through
-- memory, is stored in batches as drafts while a message is written, and the finished message
-- replaces them. The log holds one row per message.
-- A draft row is a piece of a message's text: at is where it begins in the message. The rows
-- of a conversation sit together (a finished message deletes them in one range), and nothing
-- else is checked on insert: drafts are written many times a second and live for seconds.
CREATE TABLE drafts (
	conversation_id INTEGER NOT NULL,
	message_id      TEXT NOT NULL,
	at              INTEGER NOT NULL,
	run_id          INTEGER NOT NULL,
	author          TEXT NOT NULL DEFAULT '',
	text            TEXT NOT NULL,
	PRIMARY KEY (conversation_id, message_id, at)
) WITHOUT ROWID;

-- The text deltas of a message that never finished (a crash the next start has not
-- recovered yet) become its drafts; the others are in their finished message already.
CREATE TEMP TABLE finished_messages AS
	SELECT DISTINCT conversation_id, json_extract(CAST(payload AS TEXT), '$.message_id') AS message_id
	FROM events WHERE kind = 'agent_message' AND json_valid(CAST(payload AS TEXT));
CREATE INDEX temp.finished_messages_id ON finished_messages (conversation_id, message_id);
INSERT INTO drafts (conversation_id, message_id, at, run_id, author, text)
SELECT d.conversation_id, json_extract(CAST(d.payload AS TEXT), '$.message_id'), d.id, d.run_id,
	coalesce(json_extract(CAST(d.payload AS TEXT), '$.author'), ''),
	coalesce(json_extract(CAST(d.payload AS TEXT), '$.text'), '')
FROM events d
WHERE d.kind = 'text_delta' AND d.run_id IS NOT NULL AND json_valid(CAST(d.payload AS TEXT))
	AND NOT EXISTS (SELECT 1 FROM finished_messages f WHERE f.conversation_id = d.conversation_id
		AND f.message_id = json_extract(CAST(d.payload AS TEXT), '$.message_id'))
ORDER BY d.id;
DROP TABLE temp.finished_messages;
DELETE FROM events WHERE kind = 'text_delta';
