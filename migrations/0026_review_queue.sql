-- The review queue: a conversation needs review once something went wrong in it (a bad
-- reply, an unneeded question, a failed run, a question declined or expired) after staff last
-- marked it reviewed. review_marks holds that mark, who made it, and whom it is assigned to.
CREATE TABLE review_marks (
	conversation_id INTEGER PRIMARY KEY REFERENCES conversations (id),
	reviewed_at     TEXT NOT NULL DEFAULT '',
	reviewed_by     TEXT NOT NULL DEFAULT '',
	assignee_id     INTEGER REFERENCES users (id) ON DELETE SET NULL,
	assigned_at     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX feedback_negative ON feedback (rating, updated_at) WHERE rating IN ('bad', 'unneeded');
CREATE INDEX runs_failed ON runs (updated_at) WHERE state = 'failed';
CREATE INDEX answers_refused ON answers (outcome, created_at) WHERE outcome IN ('declined', 'expired');
