-- Signing in through an identity provider, and its groups: as SQLite's 0021_identity.sql.
CREATE TABLE user_identities (
	issuer       TEXT NOT NULL,
	subject      TEXT NOT NULL,
	user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at   TEXT NOT NULL,
	last_seen_at TEXT NOT NULL,
	PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

CREATE TABLE oidc_logins (
	state_hash   TEXT PRIMARY KEY,
	browser_hash TEXT NOT NULL,
	nonce        TEXT NOT NULL,
	verifier     TEXT NOT NULL,
	next         TEXT NOT NULL,
	created_at   TEXT NOT NULL
);
CREATE INDEX oidc_logins_created ON oidc_logins (created_at);

ALTER TABLE sessions ADD COLUMN id_token TEXT NOT NULL DEFAULT '';
ALTER TABLE groups ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE group_members ADD COLUMN source TEXT NOT NULL DEFAULT '';

CREATE TRIGGER auth_members_added AFTER INSERT ON group_members FOR EACH ROW EXECUTE FUNCTION parley_auth_changed();
CREATE TRIGGER auth_members_changed AFTER UPDATE OF role ON group_members FOR EACH ROW EXECUTE FUNCTION parley_auth_changed();
CREATE TRIGGER auth_members_removed AFTER DELETE ON group_members FOR EACH ROW EXECUTE FUNCTION parley_auth_changed();
