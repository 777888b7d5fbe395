-- As SQLite's 0022_question_live.sql: whether a question is live is a column written once.
-- An integer (0 or 1), as on SQLite, so that the store's SQL is the same on both.
ALTER TABLE questions ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
UPDATE questions SET live = 1 WHERE (spec::json->>'live')::boolean;
CREATE INDEX questions_live ON questions (state, live);
