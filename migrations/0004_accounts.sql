-- People: accounts, their sessions, what staff did on their behalf, and the search index
-- of the staff review desk.
CREATE TABLE users (
	id            INTEGER PRIMARY KEY,
	name          TEXT NOT NULL UNIQUE COLLATE NOCASE,
	-- password is an argon2id hash in the PHC string format; empty for accounts that sign in
	-- through a proxy (or with --auth none), which have no password.
	password      TEXT NOT NULL DEFAULT '',
	-- role: user, staff, or service (an account of Parley's own, such as the A2A server's,
	-- which never signs in).
	role          TEXT NOT NULL CHECK (role IN ('user', 'staff', 'service')),
	created_at    TEXT NOT NULL
);

-- A session's id is only ever stored hashed (sha256): the cookie carries the id itself.
CREATE TABLE sessions (
	id_hash      TEXT PRIMARY KEY,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at   TEXT NOT NULL,
	last_seen_at TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

-- Conversations belong to a person. Those from before accounts have none: the first
-- account made adopts them.
ALTER TABLE conversations ADD COLUMN user_id INTEGER REFERENCES users (id);
CREATE INDEX conversations_user ON conversations (user_id, updated_at DESC, id DESC);
-- A start form's nonce (an A2A client's message id) finds a conversation of the same owner
-- only: nobody can reach into another's conversation by naming its nonce.
DROP INDEX conversations_nonce;
CREATE UNIQUE INDEX conversations_nonce ON conversations (coalesce(user_id, 0), nonce) WHERE nonce <> '';

-- on_behalf_of names the person a staff member answered for; empty when people answer
-- their own questions.
ALTER TABLE answers ADD COLUMN on_behalf_of TEXT NOT NULL DEFAULT '';

-- The audit log: actions taken on someone else's behalf, role changes, password resets.
CREATE TABLE audit_log (
	id              INTEGER PRIMARY KEY,
	at              TEXT NOT NULL,
	actor           TEXT NOT NULL,
	action          TEXT NOT NULL,
	conversation_id INTEGER REFERENCES conversations (id),
	detail          TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_conversation ON audit_log (conversation_id, id);

-- Full-text search over the person's and the agents' messages, questions, answers and text
-- documents. Triggers keep it in step with the tables it indexes; the rowid order is the
-- order things happened in, so newest-first is a cheap reverse scan.
CREATE VIRTUAL TABLE search USING fts5(
	body,
	kind UNINDEXED,
	conversation_id UNINDEXED,
	ref_id UNINDEXED,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER search_events AFTER INSERT ON events
WHEN NEW.kind IN ('user_message', 'agent_message', 'question_asked')
BEGIN
	INSERT INTO search (body, kind, conversation_id, ref_id)
	SELECT body, NEW.kind, NEW.conversation_id, NEW.id FROM (
		SELECT CASE
			WHEN NOT json_valid(CAST(NEW.payload AS TEXT)) THEN ''
			WHEN NEW.kind = 'question_asked' THEN coalesce(json_extract(CAST(NEW.payload AS TEXT), '$.question.message'), '')
			ELSE coalesce(json_extract(CAST(NEW.payload AS TEXT), '$.text'), '')
		END AS body
	) WHERE body <> '';
END;

CREATE TRIGGER search_answers AFTER INSERT ON answers
BEGIN
	INSERT INTO search (body, kind, conversation_id, ref_id)
	SELECT trim(coalesce((SELECT group_concat(CASE WHEN type = 'object' THEN json_extract(value, '$.name') ELSE value END, ' ')
	                      FROM json_each(CASE WHEN json_valid(CAST(NEW.vals AS TEXT)) THEN CAST(NEW.vals AS TEXT) ELSE '{}' END)), '')
	            || ' ' || coalesce(NEW.reason, '')),
		'answer', q.conversation_id, NEW.question_id
	FROM questions q WHERE q.id = NEW.question_id;
END;

CREATE TRIGGER search_documents AFTER INSERT ON documents
WHEN NEW.mime_type LIKE 'text/%' OR NEW.mime_type LIKE '%json%' OR NEW.mime_type LIKE '%yaml%'
	OR NEW.mime_type LIKE '%xml%' OR NEW.mime_type IN ('application/toml', 'application/sql', 'application/javascript')
BEGIN
	-- The name, then at most the first megabyte of the text.
	INSERT INTO search (body, kind, conversation_id, ref_id)
	VALUES (NEW.name || char(10) || CAST(substr(NEW.content, 1, 1048576) AS TEXT), 'document', NEW.conversation_id, NEW.id);
END;

-- What was stored before the index existed (payloads were stored as BLOBs then: read as
-- text; a malformed one is skipped, never a failed start).
INSERT INTO search (body, kind, conversation_id, ref_id)
SELECT body, kind, conversation_id, id FROM (
	SELECT id, kind, conversation_id, CASE
		WHEN NOT json_valid(CAST(payload AS TEXT)) THEN ''
		WHEN kind = 'question_asked' THEN coalesce(json_extract(CAST(payload AS TEXT), '$.question.message'), '')
		ELSE coalesce(json_extract(CAST(payload AS TEXT), '$.text'), '')
	END AS body
	FROM events WHERE kind IN ('user_message', 'agent_message', 'question_asked')
) WHERE body <> '' ORDER BY id;
INSERT INTO search (body, kind, conversation_id, ref_id)
SELECT trim(coalesce((SELECT group_concat(CASE WHEN type = 'object' THEN json_extract(value, '$.name') ELSE value END, ' ')
                      FROM json_each(CASE WHEN json_valid(CAST(a.vals AS TEXT)) THEN CAST(a.vals AS TEXT) ELSE '{}' END)), '')
            || ' ' || coalesce(a.reason, '')),
	'answer', q.conversation_id, a.question_id
FROM answers a JOIN questions q ON q.id = a.question_id ORDER BY a.id;
INSERT INTO search (body, kind, conversation_id, ref_id)
SELECT name || char(10) || CAST(substr(content, 1, 1048576) AS TEXT), 'document', conversation_id, id
FROM documents
WHERE mime_type LIKE 'text/%' OR mime_type LIKE '%json%' OR mime_type LIKE '%yaml%'
	OR mime_type LIKE '%xml%' OR mime_type IN ('application/toml', 'application/sql', 'application/javascript')
ORDER BY id;
