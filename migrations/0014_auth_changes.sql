-- auth_changes counts the changes that may end someone's open streams: a session ended, a
-- password or role changed, an account or an access token deleted, an A2A client revoked. The
-- server reads it every second and checks its streams again when it moved, whichever process
-- made the change (`parley user`, `parley token`, `parley a2a-client`).
CREATE TABLE auth_changes (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
);
INSERT INTO auth_changes (id, n) VALUES (1, 0);

CREATE TRIGGER auth_sessions_ended AFTER DELETE ON sessions
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;

CREATE TRIGGER auth_users_changed AFTER UPDATE OF role, password ON users
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;

CREATE TRIGGER auth_users_deleted AFTER DELETE ON users
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;

CREATE TRIGGER auth_tokens_deleted AFTER DELETE ON api_tokens
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;

CREATE TRIGGER auth_a2a_clients_revoked AFTER UPDATE OF revoked_at ON a2a_clients
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;

CREATE TRIGGER auth_a2a_clients_deleted AFTER DELETE ON a2a_clients
BEGIN
	UPDATE auth_changes SET n = n + 1;
END;
