package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
)

// apiVersions lists the conversation's versions and the points where the one shown has others.
func (s *Server) apiVersions(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	vs, shown, err := s.ledger.Versions(c.Request().Context(), conv.ID)
	if err != nil {
		return err
	}
	out := api.Versions{Current: shown, Versions: []api.Version{}, Choices: []api.Choice{}}
	for _, v := range vs {
		av := api.Version{Version: v.N, Parent: v.Parent, ForkEventID: v.Fork, Reason: v.Reason, By: v.By}
		if !v.CreatedAt.IsZero() {
			av.CreatedAt = &v.CreatedAt
		}
		out.Versions = append(out.Versions, av)
	}
	for _, ch := range vs.Choices(shown) {
		out.Choices = append(out.Choices, api.Choice{ForkEventID: ch.Fork, Versions: ch.Versions, Current: ch.Current})
	}
	return c.JSON(http.StatusOK, out)
}

// apiChooseVersion shows version n of the conversation and answers with it, as
// GET /conversations/{id} does.
func (s *Server) apiChooseVersion(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(c.Param("n"), 10, 64)
	if err != nil {
		return domain.Errorf(domain.ENOTFOUND, "No such version: %q.", c.Param("n"))
	}
	ctx := c.Request().Context()
	if err := s.ledger.ChooseVersion(ctx, conv.ID, n, currentUser(c).Name); err != nil {
		return err
	}
	return s.apiWriteState(c, conv.ID, -1)
}

// apiRegenerate has the agent answer the person's last message again, in a new version.
func (s *Server) apiRegenerate(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	var req api.Regenerate
	if _, err := apiRequest(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	version, err := s.runner.Regenerate(ctx, conv.ID, currentUser(c).Name, req.Nonce)
	if err != nil {
		return err
	}
	return s.apiAccepted(c, conv.ID, version)
}

// apiEditMessage puts new text in place of one of the person's messages, in a new version.
func (s *Server) apiEditMessage(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	msg, err := strconv.ParseInt(c.Param("event"), 10, 64)
	if err != nil {
		return domain.Errorf(domain.ENOTFOUND, "No such message: %q.", c.Param("event"))
	}
	u := currentUser(c)
	if err := s.allowMessage(u); err != nil {
		return err
	}
	var req api.EditMessage
	if _, err := apiRequest(c, &req); err != nil {
		return err
	}
	m := domain.Message{Author: u.Name, UserID: u.ID, Text: req.Text, Nonce: req.Nonce}
	version, err := s.runner.Edit(c.Request().Context(), conv.ID, msg, m)
	if err != nil {
		return err
	}
	return s.apiAccepted(c, conv.ID, version)
}

// apiAccepted answers a request that started a version: 202 with the conversation.
func (s *Server) apiAccepted(c echo.Context, convID, version int64) error {
	conv, err := s.ledger.Conversation(c.Request().Context(), convID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, api.VersionStarted{Conversation: s.apiConversation(conv), Version: version})
}

// apiRemoveQueued takes back a queued message before it is sent; 404 once it is gone.
func (s *Server) apiRemoveQueued(c echo.Context) error {
	conv, err := s.writableConversation(c)
	if err != nil {
		return err
	}
	q, err := strconv.ParseInt(c.Param("queued"), 10, 64)
	if err != nil {
		return domain.Errorf(domain.ENOTFOUND, "No such queued message: %q.", c.Param("queued"))
	}
	if err := s.ledger.Unqueue(c.Request().Context(), conv.ID, q, currentUser(c).Name); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// apiSendQueued sends the queued messages now, stopping the reply being written.
func (s *Server) apiSendQueued(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	if err := s.runner.SendQueued(c.Request().Context(), conv.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// apiWriteState answers with version n of a conversation (-1: the one shown) as
// GET /conversations/{id} does.
func (s *Server) apiWriteState(c echo.Context, convID, n int64) error {
	ctx := c.Request().Context()
	conv, err := s.ledger.Conversation(ctx, convID)
	if err != nil {
		return err
	}
	if n < 0 {
		n = conv.Version
	}
	events, err := s.ledger.VersionEvents(ctx, conv.ID, n, 0)
	if err != nil {
		return err
	}
	queued, err := s.ledger.Queued(ctx, conv.ID)
	if err != nil {
		return err
	}
	out := s.apiState(conv, events)
	out.Version = n
	out.Queued = []api.Queued{}
	for _, q := range queued {
		out.Queued = append(out.Queued, api.QueuedOf(q))
	}
	mine, err := s.feedback.Feedback(ctx, conv.ID, currentUser(c).ID)
	if err != nil {
		return err
	}
	out.Feedback = []api.Feedback{}
	for _, f := range mine {
		out.Feedback = append(out.Feedback, api.FeedbackOf(f))
	}
	return c.JSON(http.StatusOK, out)
}
