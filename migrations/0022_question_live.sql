-- Whether a question is live (asked on an agent's open connection: a tool server's call, a
-- coding agent's turn, which waits inside its step) is a column written once, when the
-- question is asked, instead of being read out of its spec by every query that needs it.
ALTER TABLE questions ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
UPDATE questions SET live = 1 WHERE json_extract(spec, '$.live') = 1;
CREATE INDEX questions_live ON questions (state, live);
