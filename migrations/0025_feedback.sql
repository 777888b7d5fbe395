-- What people thought of each agent reply and each question: one opinion a person an item,
-- changeable, taken back by deleting it. An item is a reply (its agent_message event) or a
-- question (its id). reasons is a JSON array of the reasons ticked, of those staff list in
-- feedback_reasons (in their order, by position).
CREATE TABLE feedback (
	id              INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	item            TEXT NOT NULL,
	item_id         INTEGER NOT NULL,
	user_id         INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	rating          TEXT NOT NULL,
	comment         TEXT NOT NULL DEFAULT '',
	reasons         TEXT NOT NULL DEFAULT '[]',
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL,
	UNIQUE (item, item_id, user_id)
);
CREATE INDEX feedback_conversation ON feedback (conversation_id, id);

CREATE TABLE feedback_reasons (
	name     TEXT PRIMARY KEY,
	position INTEGER NOT NULL
);
INSERT INTO feedback_reasons (name, position) VALUES ('wrong', 1), ('unsafe', 2), ('too slow', 3), ('didn''t follow instructions', 4);
