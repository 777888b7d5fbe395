-- One row that /healthz rewrites, at most every few seconds, to learn that the database still
-- takes writes.
CREATE TABLE write_probe (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	probed_at TEXT NOT NULL
);
