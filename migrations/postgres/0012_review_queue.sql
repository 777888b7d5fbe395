-- As SQLite's 0026_review_queue.sql: the review queue's marks and the indexes it reads.
CREATE TABLE review_marks (
	conversation_id BIGINT PRIMARY KEY REFERENCES conversations (id),
	reviewed_at     TEXT NOT NULL DEFAULT '',
	reviewed_by     TEXT NOT NULL DEFAULT '',
	assignee_id     BIGINT REFERENCES users (id) ON DELETE SET NULL,
	assigned_at     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX feedback_negative ON feedback (rating, updated_at) WHERE rating IN ('bad', 'unneeded');
CREATE INDEX runs_failed ON runs (updated_at) WHERE state = 'failed';
CREATE INDEX answers_refused ON answers (outcome, created_at) WHERE outcome IN ('declined', 'expired');
