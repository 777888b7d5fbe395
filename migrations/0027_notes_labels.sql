-- Staff's notes on a conversation (Markdown) and the labels they put on it, from a list they
-- keep. Both are staff's alone: the person never sees them.
CREATE TABLE staff_notes (
	id              INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	author          TEXT NOT NULL,
	body            TEXT NOT NULL,
	created_at      TEXT NOT NULL
);
CREATE INDEX staff_notes_conversation ON staff_notes (conversation_id, id);

CREATE TABLE labels (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at TEXT NOT NULL
);

CREATE TABLE conversation_labels (
	conversation_id INTEGER NOT NULL REFERENCES conversations (id),
	label_id        INTEGER NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
	added_by        TEXT NOT NULL,
	added_at        TEXT NOT NULL,
	PRIMARY KEY (conversation_id, label_id)
);
CREATE INDEX conversation_labels_label ON conversation_labels (label_id);
