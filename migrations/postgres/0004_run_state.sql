-- As SQLite's 0020_run_state.sql: a conversation's state is derived from its runs'.
CREATE INDEX runs_current ON runs (conversation_id, version, id);
DROP INDEX runs_conversation;
ALTER TABLE conversations DROP COLUMN state;
