-- Conversation ids from a sequence: instances that start conversations at the same moment
-- take different ids without waiting for each other. It starts above every id given so far,
-- deleted ones too (id_floor), as the SQLite store's "one above the highest ever" does.
CREATE SEQUENCE conversation_ids OWNED BY conversations.id;
SELECT setval('conversation_ids', greatest(
	coalesce((SELECT max(id) FROM conversations), 0),
	coalesce((SELECT id FROM id_floor WHERE name = 'conversations'), 0)) + 1, false);
