-- inbound_requests are the request ids that agents reaching Parley (its MCP server) gave
-- their questions: asking again with the same id, as the same person, finds the question
-- instead of asking twice. digest is what was asked, so that an id reused for another
-- question is refused. An id is kept as long as its question.
CREATE TABLE inbound_requests (
	user_id     INTEGER NOT NULL,
	request_id  TEXT NOT NULL,
	digest      TEXT NOT NULL,
	question_id INTEGER NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
	PRIMARY KEY (user_id, request_id)
);
CREATE INDEX inbound_requests_question ON inbound_requests (question_id);
