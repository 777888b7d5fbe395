-- Clients of Parley's A2A server, each with a token of its own, only ever stored hashed
-- (sha256), as the personal access tokens are. A revoked client keeps its row, so that its
-- tasks and the audit log still name it; its token is refused. A name is unique among the
-- clients not revoked.
CREATE TABLE a2a_clients (
	id           INTEGER PRIMARY KEY,
	name         TEXT NOT NULL,
	hash         TEXT NOT NULL UNIQUE,
	created_at   TEXT NOT NULL,
	last_used_at TEXT NOT NULL DEFAULT '',
	revoked_at   TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX a2a_clients_name ON a2a_clients (name) WHERE revoked_at = '';

-- Each task belongs to the client that created it: other clients do not find it. Tasks made
-- before clients had tokens of their own belong to none until the client of the old shared
-- token (PARLEY_A2A_TOKEN, named "default") is first served, which takes them.
ALTER TABLE a2a_tasks ADD COLUMN client_id INTEGER REFERENCES a2a_clients (id);
