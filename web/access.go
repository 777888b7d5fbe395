package web

import (
	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/agent"
)

// notFound is what anyone gets for a conversation that is not theirs to read: the same as
// for one that does not exist, so that ids tell nothing.
func notFound(id int64) error { return agent.Errorf(agent.ENOTFOUND, "Conversation %d not found.", id) }

// readableConversation returns the conversation of the :id parameter when the signed-in
// person may read it (theirs, or any for staff), ENOTFOUND otherwise.
func (s *Server) readableConversation(c echo.Context) (agent.Conversation, error) {
	id, err := paramID(c)
	if err != nil {
		return agent.Conversation{}, err
	}
	return s.readable(c, id)
}

// readable returns conversation id when the signed-in person may read it, ENOTFOUND otherwise.
func (s *Server) readable(c echo.Context, id int64) (agent.Conversation, error) {
	conv, err := s.db.Conversation(c.Request().Context(), id)
	if err != nil {
		return conv, err
	}
	if !currentUser(c).CanRead(conv) {
		return agent.Conversation{}, notFound(id)
	}
	return conv, nil
}

// writableConversation returns the conversation of the :id parameter when the signed-in
// person may write in it (theirs). Staff reading someone else's get EFORBIDDEN; anyone
// else ENOTFOUND.
func (s *Server) writableConversation(c echo.Context) (agent.Conversation, error) {
	conv, err := s.readableConversation(c)
	if err != nil {
		return conv, err
	}
	if !currentUser(c).CanWrite(conv) {
		return agent.Conversation{}, agent.Errorf(agent.EFORBIDDEN, "Staff read other people's conversations; they do not write in them.")
	}
	return conv, nil
}

// answerable checks that the signed-in person may resolve question id: its conversation's
// owner, or staff when staff may answer on someone's behalf (onBehalfOf then names the
// owner). Staff otherwise get EFORBIDDEN, anyone else ENOTFOUND.
func (s *Server) answerable(c echo.Context, id int64) (rec agent.QuestionRecord, onBehalfOf string, err error) {
	rec, err = s.db.Question(c.Request().Context(), id)
	if err != nil {
		return rec, "", err
	}
	conv, err := s.readable(c, rec.ConversationID)
	if err != nil {
		return agent.QuestionRecord{}, "", agent.Errorf(agent.ENOTFOUND, "Question %d not found.", id)
	}
	u := currentUser(c)
	switch {
	case u.CanWrite(conv):
		return rec, "", nil
	case s.auth.StaffAnswer && u.IsStaff():
		owner := conv.Owner
		if owner == "" {
			owner = "nobody"
		}
		return rec, owner, nil
	}
	return agent.QuestionRecord{}, "", agent.Errorf(agent.EFORBIDDEN, "Staff read other people's questions; answering for them is turned off.")
}

// ownerName is the conversation's owner as pages name them.
func ownerName(conv agent.Conversation) string {
	if conv.Owner == "" {
		return "nobody"
	}
	return conv.Owner
}
