package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/starfederation/datastar-go/datastar"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/views"
)

// person is who answers and writes until accounts exist.
const person = "you"

func (s *Server) handleHome(c echo.Context) error {
	return s.renderHome(c, http.StatusOK, views.HomeData{})
}

func (s *Server) renderHome(c echo.Context, status int, d views.HomeData) error {
	list, err := s.db.ListConversations(c.Request().Context(), 200)
	if err != nil {
		return err
	}
	d.Conversations, d.Agents, d.Problems, d.Attach = list, s.runner.Agents(), s.problems, s.attach()
	if d.Nonce == "" {
		d.Nonce = newNonce()
	}
	return page(c, status, views.Home(d))
}

func (s *Server) handleCreateConversation(c echo.Context) error {
	name, text, nonce := c.FormValue("agent"), c.FormValue("text"), c.FormValue("nonce")
	files, err := s.uploads.readFiles(c)
	if err == nil {
		var conv agent.Conversation
		conv, err = s.runner.NewConversation(c.Request().Context(), name, agent.Message{Text: text, Author: person, Nonce: nonce, Files: files})
		if err == nil {
			return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/c/%d", conv.ID))
		}
	}
	if agent.ErrorCode(err) == agent.EINVALID {
		return s.renderHome(c, http.StatusUnprocessableEntity, views.HomeData{Agent: name, Message: text, Error: agent.ErrorMessage(err), Nonce: nonce})
	}
	return err
}

func (s *Server) handleConversation(c echo.Context) error {
	id, err := paramID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	conv, err := s.db.Conversation(ctx, id)
	if err != nil {
		return err
	}
	events, err := s.db.Events(ctx, id, 0)
	if err != nil {
		return err
	}
	title := conv.Agent
	if info, ok := s.runner.Agent(conv.Agent); ok {
		title = info.Title
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return page(c, http.StatusOK, views.ConversationPage(views.ConversationData{Conversation: conv, AgentTitle: title, Thread: views.BuildThread(events), Nonce: newNonce(), Attach: s.attach()}))
}

// handleSendMessage posts the person's message; the reply arrives on the conversation's stream.
func (s *Server) handleSendMessage(c echo.Context) error {
	id, err := paramID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	sse := func(comp templ.Component, opts ...datastar.PatchElementOption) error {
		return newSSE(c).PatchElements(html(ctx, comp), opts...)
	}
	files, err := s.uploads.readFiles(c)
	if err == nil {
		if _, ferr := c.FormParams(); ferr != nil {
			return sse(views.ComposerError(tooLarge(ferr)))
		}
		err = s.runner.Send(ctx, id, agent.Message{Text: c.FormValue("text"), Author: person, Nonce: c.FormValue("nonce"), Files: files})
	}
	switch agent.ErrorCode(err) {
	case "":
		return sse(s.composer(id, newNonce()), datastar.WithModeReplace())
	case agent.EINVALID, agent.ECONFLICT:
		// Only the error is patched: the message box keeps what was typed.
		return sse(views.ComposerError(agent.ErrorMessage(err)))
	}
	return err
}

// tooLarge explains a form that could not be read.
func tooLarge(err error) string {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Sprintf("The message is too long (at most %s): attach a large text as a file instead.", agent.ByteSize(agent.MaxMessageBytes))
	}
	return "The message could not be read; try again."
}

// newNonce returns a random one-time token.
func newNonce() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) handleRetry(c echo.Context) error {
	id, err := paramID(c)
	if err != nil {
		return err
	}
	err = s.runner.Retry(c.Request().Context(), id)
	if err != nil && agent.ErrorCode(err) != agent.ECONFLICT {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
