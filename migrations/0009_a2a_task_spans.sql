-- An A2A task's state is read from its conversation's log, from the event its first message
-- came after; the stored JSON snapshot (a2a_tasks.task) is no longer written or read.
ALTER TABLE a2a_tasks ADD COLUMN from_event INTEGER NOT NULL DEFAULT 0;
