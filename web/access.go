package web

import (
	"context"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// notFound is what anyone gets for a conversation that is not theirs to read: the same as
// for one that does not exist, so that ids tell nothing.
func notFound(id int64) error {
	return domain.ConversationNotFound(id)
}

// readableConversation returns the conversation of the :id parameter when the signed-in
// person may read it (theirs, or any for staff), ENOTFOUND otherwise.
func (s *Server) readableConversation(c echo.Context) (domain.Conversation, error) {
	id, err := paramID(c)
	if err != nil {
		return domain.Conversation{}, err
	}
	return s.readable(c, id)
}

// readable returns conversation id when the signed-in person may read it, ENOTFOUND otherwise.
func (s *Server) readable(c echo.Context, id int64) (domain.Conversation, error) {
	conv, err := s.ledger.Conversation(c.Request().Context(), id)
	if err != nil {
		return conv, err
	}
	if !currentUser(c).CanRead(conv) {
		return domain.Conversation{}, notFound(id)
	}
	return conv, nil
}

// writableConversation returns the conversation of the :id parameter when the signed-in
// person may write in it (theirs). Staff reading someone else's get EFORBIDDEN; anyone
// else ENOTFOUND.
func (s *Server) writableConversation(c echo.Context) (domain.Conversation, error) {
	conv, err := s.readableConversation(c)
	if err != nil {
		return conv, err
	}
	if !currentUser(c).CanWrite(conv) {
		return domain.Conversation{}, domain.Errorf(domain.EFORBIDDEN, "Staff read other people's conversations; they do not write in them.")
	}
	return conv, nil
}

// modeFor is how conv renders for u, which is also what u may do in it (domain.CapacityIn):
// its owner writes; staff read, and with StaffAnswer resolve its questions on the owner's
// behalf.
func (s *Server) modeFor(u domain.User, conv domain.Conversation) views.Mode {
	k := domain.CapacityIn(u, conv, s.auth.StaffAnswer)
	m := views.Mode{Owner: ownerName(conv), Name: u.Name, ReadOnly: !k.Owner, OnBehalfOf: k.OnBehalfOf, AgentIcon: s.agentIcon(conv)}
	if k.Owner {
		m.Asker = u.Name
	}
	return m
}

// pageMode is how conv renders for the signed-in person (modeFor), with the groups whose
// questions they answer and, when it is theirs, why nothing new starts in it (if so).
func (s *Server) pageMode(c echo.Context, conv domain.Conversation) (views.Mode, error) {
	m := s.modeFor(currentUser(c), conv)
	m.Groups = s.viewerGroups(c)
	var err error
	m.Closed, err = s.closedReason(c, conv)
	return m, err
}

// withMode is the request's context with how the conversation renders for its viewer.
func (s *Server) withMode(c echo.Context, conv domain.Conversation) (context.Context, error) {
	m, err := s.pageMode(c, conv)
	return views.WithMode(c.Request().Context(), m), err
}

// viewerGroups are memberGroups of the signed-in person, read once per request (see person).
func (s *Server) viewerGroups(c echo.Context) []string {
	p, err := s.person(c)
	if err != nil {
		s.log.Error("groups of", "user", currentUser(c).ID, "error", err)
	}
	return p.Groups
}

// memberGroups are the names of the groups the person is a member of (whose questions they
// answer); none when they cannot be read (the cards then say whom they wait for).
func (s *Server) memberGroups(ctx context.Context, userID int64) []string {
	gs, err := s.groups.MemberGroups(ctx, userID)
	if err != nil {
		s.log.Error("groups of", "user", userID, "error", err)
	}
	return gs
}

// answerable reads question id and its conversation, and checks that the signed-in person
// may resolve it (see answererMode).
func (s *Server) answerable(c echo.Context, id int64) (domain.QuestionRecord, views.Mode, error) {
	ctx := c.Request().Context()
	rec, err := s.questions.Question(ctx, id)
	if err != nil {
		return rec, views.Mode{}, err
	}
	conv, err := s.ledger.Conversation(ctx, rec.ConversationID)
	if err != nil {
		return rec, views.Mode{}, err
	}
	forYou, err := s.questions.QuestionFor(ctx, rec.ID, currentUser(c).ID)
	if err != nil {
		return rec, views.Mode{}, err
	}
	m, err := s.answererMode(c, rec, conv, forYou)
	if err != nil {
		return domain.QuestionRecord{}, m, err
	}
	return rec, m, nil
}

// answererMode asks the domain whether the signed-in person may resolve question rec of
// conversation conv (domain.MayResolve: the one rule), forYou saying it is put to them (see
// store.QuestionFor), and returns how the question renders for them. Staff who may not
// answer get EFORBIDDEN, anyone else ENOTFOUND.
func (s *Server) answererMode(c echo.Context, rec domain.QuestionRecord, conv domain.Conversation, forYou bool) (views.Mode, error) {
	u := currentUser(c)
	a, err := domain.MayResolve(domain.AnswererFacts{Question: rec.Question, Conversation: conv, By: u, ForThem: forYou, StaffAnswer: s.auth.StaffAnswer})
	switch {
	case err != nil:
		return views.Mode{}, err
	case a.ForThem:
		// It is theirs to answer: a group's they are in, an approval routed to them, or an
		// escalation to them.
		return views.Mode{Name: u.Name, Owner: ownerName(conv), Answers: true, Groups: append(slices.Clip(s.viewerGroups(c)), rec.To)}, nil
	}
	return s.modeFor(u, conv), nil
}

// actor is who resolves a question in this request: the signed-in person (on the owner's
// behalf where mode says so), with the access token they came with, if any.
func actor(c echo.Context, mode views.Mode) domain.Actor {
	a := domain.Actor{Name: currentUser(c).Name, UserID: currentUser(c).ID, OnBehalfOf: mode.OnBehalfOf}
	if t := currentToken(c); t.ID != 0 {
		a.Via = t.Via()
	}
	return a
}

// ownerName is the conversation's owner as pages name them.
func ownerName(conv domain.Conversation) string {
	if conv.Owner == "" {
		return "nobody"
	}
	return conv.Owner
}
