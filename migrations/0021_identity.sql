-- Signing in through an organization's identity provider (OpenID Connect), and its groups.
--
-- user_identities link an account to the provider's subject it signs in as (issuer and
-- sub): the account is found by it at every sign-in, whatever name the provider sends later.
CREATE TABLE user_identities (
	issuer       TEXT NOT NULL,
	subject      TEXT NOT NULL,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at   TEXT NOT NULL,
	last_seen_at TEXT NOT NULL,
	PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

-- oidc_logins are sign-ins sent to the provider and not yet back: the hash of their state,
-- the hash of the browser's cookie (the callback must reach the browser that started it),
-- their nonce, PKCE verifier and where to go after. Each is taken once; old ones are swept.
CREATE TABLE oidc_logins (
	state_hash   TEXT PRIMARY KEY,
	browser_hash TEXT NOT NULL,
	nonce        TEXT NOT NULL,
	verifier     TEXT NOT NULL,
	next         TEXT NOT NULL,
	created_at   TEXT NOT NULL
);
CREATE INDEX oidc_logins_created ON oidc_logins (created_at);

-- A session signed in through the provider keeps its ID token: signing out hands it back to
-- the provider (id_token_hint).
ALTER TABLE sessions ADD COLUMN id_token TEXT NOT NULL DEFAULT '';

-- Groups and memberships that come from the identity provider, or a sign-in proxy's groups
-- header, name it in source ('oidc' or 'proxy'); staff's own have ''. A person's memberships
-- from a source are set again at each of their sign-ins: joined and left.
ALTER TABLE groups ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE group_members ADD COLUMN source TEXT NOT NULL DEFAULT '';

-- Who is in which group decides who may use which agent and answer which question: a
-- change of membership has open streams checked again, as other changes of access do.
CREATE TRIGGER auth_members_added AFTER INSERT ON group_members
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;

CREATE TRIGGER auth_members_changed AFTER UPDATE OF role ON group_members
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;

CREATE TRIGGER auth_members_removed AFTER DELETE ON group_members
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;
