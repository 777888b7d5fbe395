-- A run's state is kept in runs.state only: a conversation's state is that of its current
-- run, the newest of the version it shows (see store.conversationState), which
-- runs_current finds. It covers what runs_conversation served.
CREATE INDEX runs_current ON runs (conversation_id, version, id);
DROP INDEX runs_conversation;
ALTER TABLE conversations DROP COLUMN state;
