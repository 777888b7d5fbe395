package web

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
)

func (s *Server) apiMe(c echo.Context) error {
	u := currentUser(c)
	return c.JSON(http.StatusOK, api.Me{Name: u.Name, Role: string(u.Role), Token: currentToken(c).Name})
}

func (s *Server) apiAgents(c echo.Context) error {
	agents, err := s.agentsFor(c)
	if err != nil {
		return err
	}
	out := []api.Agent{}
	for _, a := range agents {
		out = append(out, api.Agent{Name: a.Name, Title: a.Title, Description: a.Description, Builtin: a.Builtin})
	}
	return c.JSON(http.StatusOK, api.AgentList{Agents: out})
}

// apiListConversations lists the person's conversations, newest first (?limit=, at most 200;
// ?archived=true for the archived ones).
func (s *Server) apiListConversations(c echo.Context) error {
	limit, err := strconv.Atoi(c.QueryParam("limit"))
	if err != nil || limit <= 0 || limit > 200 {
		limit = 50
	}
	archived := domain.ArchivedNot
	if c.QueryParam("archived") == "true" {
		archived = domain.ArchivedOnly
	}
	list, _, err := s.ledger.ListConversations(c.Request().Context(), domain.ConversationFilter{UserID: currentUser(c).ID, Archived: archived, Limit: limit})
	if err != nil {
		return err
	}
	out := make([]api.Conversation, 0, len(list))
	for _, conv := range list {
		out = append(out, s.apiConversation(conv))
	}
	return c.JSON(http.StatusOK, api.ConversationList{Conversations: out})
}

// newMessage is the message to send of a request read by apiRequest: its text and nonce,
// and its files when the request was a form (multipart).
func (s *Server) newMessage(c echo.Context, form url.Values, text, nonce string) (domain.Message, error) {
	u := currentUser(c)
	m := domain.Message{Author: u.Name, UserID: u.ID, Text: text, Nonce: nonce}
	if form != nil {
		var err error
		if m.Files, err = s.uploads.readFiles(c); err != nil {
			return m, err
		}
	}
	return m, nil
}

// apiCreateConversation starts a conversation with an agent from its first message.
func (s *Server) apiCreateConversation(c echo.Context) error {
	// The limit first, as the browser's form does: a refused message costs no upload.
	if err := s.allowMessage(currentUser(c)); err != nil {
		return err
	}
	var req api.NewConversation
	form, err := apiRequest(c, &req)
	if err != nil {
		return err
	}
	m, err := s.newMessage(c, form, req.Text, req.Nonce)
	if err != nil {
		return err
	}
	conv, err := s.runner.NewConversation(c.Request().Context(), req.Agent, m)
	if err != nil {
		s.refusedStart(c, req.Agent, err)
		return err
	}
	if conv, err = s.ledger.Conversation(c.Request().Context(), conv.ID); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, apiPrefix+"/conversations/"+strconv.FormatInt(conv.ID, 10))
	return c.JSON(http.StatusCreated, api.ConversationCreated{Conversation: s.apiConversation(conv)})
}

// apiGetConversation answers with the conversation as it shows (?version=N: as version N
// shows it).
func (s *Server) apiGetConversation(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	n, err := versionParam(c)
	if err != nil {
		return err
	}
	return s.apiWriteState(c, conv.ID, n)
}

// apiSendMessage posts the person's message; the reply arrives on the conversation's events.
func (s *Server) apiSendMessage(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	if err := s.allowMessage(currentUser(c)); err != nil {
		return err
	}
	var req api.NewMessage
	form, err := apiRequest(c, &req)
	if err != nil {
		return err
	}
	m, err := s.newMessage(c, form, req.Text, req.Nonce)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	sent, err := s.runner.Send(ctx, conv.ID, m)
	if err != nil {
		return err
	}
	if conv, err = s.ledger.Conversation(ctx, conv.ID); err != nil {
		return err
	}
	out := api.MessageSent{Conversation: s.apiConversation(conv)}
	if sent.Queued != 0 {
		queued, err := s.ledger.Queued(ctx, conv.ID)
		if err != nil {
			return err
		}
		for _, q := range queued {
			if q.ID == sent.Queued {
				aq := api.QueuedOf(q)
				out.Queued = &aq
			}
		}
	}
	return c.JSON(http.StatusAccepted, out)
}

// apiStop stops the reply being written, as the page's Stop does.
func (s *Server) apiStop(c echo.Context) error {
	conv, err := s.writableConversation(c)
	if err != nil {
		return err
	}
	s.runner.StopReply(c.Request().Context(), conv.ID)
	return c.NoContent(http.StatusNoContent)
}

// apiRetry runs a failed, interrupted or stopped run's step again; 409 when there is none.
func (s *Server) apiRetry(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	if err := s.runner.Retry(c.Request().Context(), conv.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
