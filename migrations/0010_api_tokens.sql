-- Personal access tokens for the JSON API (/api/v1) and `parley chat`. A token is only ever
-- stored hashed (sha256): the person sees it once, when it is made. Names are the person's
-- own labels, unique per person; a revoked token is deleted.
CREATE TABLE api_tokens (
	id           INTEGER PRIMARY KEY,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	hash         TEXT NOT NULL UNIQUE,
	created_at   TEXT NOT NULL,
	last_used_at TEXT NOT NULL DEFAULT '',
	UNIQUE (user_id, name)
);

-- An answer given with a token names it ("token laptop"), for review and the audit.
ALTER TABLE answers ADD COLUMN via TEXT NOT NULL DEFAULT '';
