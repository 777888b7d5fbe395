package web

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
)

// personKey is where the signed-in person's groups are kept on the echo context once read.
const personKey = "parley.person"

// person is the signed-in person with their groups, as access rules read them: read once
// per request.
func (s *Server) person(c echo.Context) (domain.Person, error) {
	if p, ok := c.Get(personKey).(domain.Person); ok {
		return p, nil
	}
	p, err := s.runner.PersonOf(c.Request().Context(), currentUser(c))
	if err != nil {
		return p, err
	}
	c.Set(personKey, p)
	return p, nil
}

// agentsFor lists the agents the signed-in person may use: the picker, GET /api/v1/agents.
func (s *Server) agentsFor(c echo.Context) ([]domain.Info, error) {
	p, err := s.person(c)
	if err != nil {
		return nil, err
	}
	return s.runner.AgentsFor(p), nil
}

// closedReason says why nothing new may start in the person's own conversation: they may no
// longer use its agent ("" when they may, or the conversation is not theirs).
func (s *Server) closedReason(c echo.Context, conv domain.Conversation) (string, error) {
	if !currentUser(c).CanWrite(conv) || conv.Inbound() || s.runner.Policy(conv.Agent).Access.Open() {
		return "", nil
	}
	p, err := s.person(c)
	if err != nil {
		return "", err
	}
	if s.runner.MayUse(p, conv.Agent) {
		return "", nil
	}
	return domain.ErrorMessage(runner.LostAgent(s.conversationAgent(conv))), nil
}

// workableConversation is writableConversation for the requests that start new work in it
// (a message, Retry, Regenerate, an edit, a version chosen, queued messages sent): refused,
// saying why, once the person may no longer use its agent. The refusal is audited.
func (s *Server) workableConversation(c echo.Context) (domain.Conversation, error) {
	conv, err := s.writableConversation(c)
	if err != nil {
		return conv, err
	}
	why, err := s.closedReason(c, conv)
	if err != nil || why == "" {
		return conv, err
	}
	s.refused(c, conv.ID, conv.Agent)
	return domain.Conversation{}, domain.Errorf(domain.EFORBIDDEN, "%s", why)
}

// refused writes an access refusal to the audit log (and the server's log): who, which
// agent, by which route.
func (s *Server) refused(c echo.Context, convID int64, agentName string) {
	u := currentUser(c)
	detail := fmt.Sprintf("agent %s: %s %s", agentName, c.Request().Method, c.Path())
	if t := currentToken(c); t.ID != 0 {
		detail += " with " + t.Via()
	}
	s.log.Info("access refused", "user", u.Name, "agent", agentName, "route", c.Path())
	if err := s.ids.Audit(c.Request().Context(), u.Name, "access refused", convID, detail); err != nil {
		s.log.Error("audit access refused", "error", err)
	}
}

// refusedStart audits a start refused because the person may not use the agent (one that is
// served here: a name nobody serves is only a mistake).
func (s *Server) refusedStart(c echo.Context, name string, err error) {
	if domain.ErrorCode(err) != domain.ENOTFOUND {
		return
	}
	if _, ok := s.runner.Agent(name); ok {
		s.refused(c, 0, name)
	}
}
