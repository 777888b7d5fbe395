-- Groups are people asked together: a question to a group is in every member's Inbox, and
-- the first answer resolves it for all. A member may address the group; staff may let
-- others address it too (role 'asker': they ask it, it is not in their Inbox).
CREATE TABLE groups (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX groups_name ON groups (name COLLATE NOCASE);

CREATE TABLE group_members (
	group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
	user_id  INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	role     TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'asker')),
	PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user ON group_members (user_id);

-- question_audience is whom a question is for when that is not (only) its conversation's
-- owner: the group it was addressed to, and whom an escalation added (escalated = 1).
-- Without a row of escalated = 0, the question is its owner's.
CREATE TABLE question_audience (
	question_id INTEGER NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
	group_id    INTEGER REFERENCES groups (id) ON DELETE CASCADE,
	user_id     INTEGER REFERENCES users (id) ON DELETE CASCADE,
	escalated   INTEGER NOT NULL DEFAULT 0,
	added_at    TEXT NOT NULL,
	CHECK ((group_id IS NULL) <> (user_id IS NULL))
);
CREATE INDEX question_audience_question ON question_audience (question_id);
CREATE INDEX question_audience_group ON question_audience (group_id);
CREATE INDEX question_audience_user ON question_audience (user_id);

-- question_approvals are the approvals of a question that needs several (Question.Approvals):
-- one per person; it is answered once enough people approved the same values (vals).
CREATE TABLE question_approvals (
	id           INTEGER PRIMARY KEY,
	question_id  INTEGER NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
	approved_by  TEXT NOT NULL,
	on_behalf_of TEXT NOT NULL DEFAULT '',
	vals         TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	UNIQUE (question_id, approved_by)
);
