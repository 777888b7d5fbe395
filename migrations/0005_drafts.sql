-- Streamed text no longer goes into the event log token by token: it reaches streams through
-- memory, is stored in batches while a message is written (so that a crash loses little), and
-- the finished message holds all of it. The log holds one row per message.
-- A batch is the text written in all conversations since the one before, as JSON:
-- [{"c": conversation, "r": run, "m": message, "a": where the text begins in the message,
--   "u": author, "t": text}]. One row per batch keeps the writes few and at the end of the
-- table; a batch is deleted once none of its messages is still being written.
CREATE TABLE draft_batches (
	id     INTEGER PRIMARY KEY,
	drafts TEXT NOT NULL
);

-- The text deltas of a message that never finished (a crash the next start has not
-- recovered yet) become a batch; the others are in their finished message already.
CREATE TEMP TABLE finished_messages AS
	SELECT DISTINCT conversation_id, json_extract(CAST(payload AS TEXT), '$.message_id') AS message_id
	FROM events WHERE kind = 'agent_message' AND json_valid(CAST(payload AS TEXT));
CREATE INDEX temp.finished_messages_id ON finished_messages (conversation_id, message_id);
INSERT INTO draft_batches (drafts)
SELECT json_group_array(json_object('c', conversation_id, 'r', run_id, 'm', message_id, 'a', id, 'u', author, 't', text))
FROM (
	SELECT d.id, d.conversation_id, d.run_id, json_extract(CAST(d.payload AS TEXT), '$.message_id') AS message_id,
		coalesce(json_extract(CAST(d.payload AS TEXT), '$.author'), '') AS author,
		coalesce(json_extract(CAST(d.payload AS TEXT), '$.text'), '') AS text
	FROM events d
	WHERE d.kind = 'text_delta' AND d.run_id IS NOT NULL AND json_valid(CAST(d.payload AS TEXT))
		AND NOT EXISTS (SELECT 1 FROM finished_messages f WHERE f.conversation_id = d.conversation_id
			AND f.message_id = json_extract(CAST(d.payload AS TEXT), '$.message_id'))
	ORDER BY d.id
)
HAVING count(*) > 0;
DROP TABLE temp.finished_messages;
DELETE FROM events WHERE kind = 'text_delta';
