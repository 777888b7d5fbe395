-- rate_limits are the counts of the limits (messages a minute, failed sign-ins, sign-ups) of
-- every instance together: token buckets by key, forgotten once full again (full_at).
CREATE TABLE rate_limits (
	key     TEXT PRIMARY KEY,
	tokens  DOUBLE PRECISION NOT NULL,
	last    TEXT NOT NULL,
	full_at TEXT NOT NULL
);
CREATE INDEX rate_limits_full ON rate_limits (full_at);
