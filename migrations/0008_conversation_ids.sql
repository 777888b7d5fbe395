-- A deleted conversation's id is never given again (a page still open on it must not show
-- another one): new ids go above the highest id ever deleted, kept here.
CREATE TABLE id_floor (
	name TEXT PRIMARY KEY,
	id   INTEGER NOT NULL
);
CREATE INDEX questions_pending_conversation ON questions (conversation_id) WHERE state = 'pending';
