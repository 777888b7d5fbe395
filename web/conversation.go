package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/starfederation/datastar-go/datastar"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

func (s *Server) handleHome(c echo.Context) error {
	return s.renderHome(c, http.StatusOK, views.HomeData{Deleted: c.QueryParam("deleted") != ""})
}

func (s *Server) renderHome(c echo.Context, status int, d views.HomeData) error {
	list, _, err := s.ledger.ListConversations(c.Request().Context(), domain.ConversationFilter{UserID: currentUser(c).ID, Archived: domain.ArchivedNot, Limit: 200})
	if err != nil {
		return err
	}
	agents, err := s.agentsFor(c)
	if err != nil {
		return err
	}
	d.Conversations, d.Agents, d.Problems, d.Attach = list, agents, s.problems, s.attach()
	if s.liveProblems != nil {
		d.Problems = append(d.Problems[:len(d.Problems):len(d.Problems)], s.liveProblems()...)
	}
	if d.Nonce == "" {
		d.Nonce = domain.NewNonce()
	}
	return s.page(c, status, views.Home(d))
}

func (s *Server) handleCreateConversation(c echo.Context) error {
	name, text, nonce := c.FormValue("agent"), c.FormValue("text"), c.FormValue("nonce")
	u := currentUser(c)
	files, err := s.uploads.readFiles(c)
	if err == nil {
		err = s.allowMessage(u)
	}
	if err == nil {
		var conv domain.Conversation
		conv, err = s.runner.NewConversation(c.Request().Context(), name, domain.Message{Text: text, Author: u.Name, UserID: u.ID, Nonce: nonce, Files: files})
		if err == nil {
			return c.Redirect(http.StatusSeeOther, conversationURL(conv.ID))
		}
	}
	s.refusedStart(c, name, err)
	switch domain.ErrorCode(err) {
	case domain.EINVALID, domain.ETOOMANY, domain.ENOTFOUND:
		// An agent not there for the person (not served, or not theirs) is a 404, as
		// anything they may not see; the page keeps what they typed.
		return s.renderHome(c, statusOf(err), views.HomeData{Agent: name, Message: text, Error: domain.ErrorMessage(err), Nonce: nonce})
	}
	return err
}

// allowMessage spends one of the person's messages of the minute, or says when to try again.
func (s *Server) allowMessage(u domain.User) error {
	if ok, wait := s.messages.take(fmt.Sprint(u.ID)); !ok {
		return tooMany(fmt.Sprintf("You are sending messages too fast (at most %d a minute).", s.limits.MessagesPerMinute), wait)
	}
	return nil
}

func (s *Server) handleConversation(c echo.Context) error {
	conv, err := s.readableConversation(c)
	if err != nil {
		return err
	}
	ctx, err := s.withMode(c, conv)
	if err != nil {
		return err
	}
	if ctx, err = s.withFeedback(ctx, currentUser(c), conv, false); err != nil {
		return err
	}
	// Staff may read another version than the one shown (?version=N); its owner reads
	// the one shown, and moves between them with the page's controls.
	want := pinnedVersion(c, conv)
	thread, _, n, count, err := s.versionThread(ctx, conv, want)
	if err != nil {
		return err
	}
	queued, err := s.ledger.Queued(ctx, conv.ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	c.SetRequest(c.Request().WithContext(ctx))
	return s.page(c, http.StatusOK, views.ConversationPage(views.ConversationData{Conversation: conv, AgentTitle: s.conversationAgent(conv), Thread: thread,
		Nonce: domain.NewNonce(), Attach: s.attach(), Queued: queued, Pinned: want >= 0 && n != conv.Version, Version: n, Versions: count}))
}

// handleSendMessage posts the person's message; the reply arrives on the conversation's stream.
func (s *Server) handleSendMessage(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	id, ctx := conv.ID, c.Request().Context()
	u := currentUser(c)
	if err := s.allowMessage(u); err != nil {
		return err
	}
	sse := func(comp templ.Component, opts ...datastar.PatchElementOption) error {
		return s.patch(c, ctx, comp, opts...)
	}
	files, err := s.uploads.readFiles(c)
	if err == nil {
		if _, ferr := c.FormParams(); ferr != nil {
			return sse(views.ComposerError(tooLarge(ferr)))
		}
		_, err = s.runner.Send(ctx, id, domain.Message{Text: c.FormValue("text"), Author: u.Name, UserID: u.ID, Nonce: c.FormValue("nonce"), Files: files})
	}
	switch domain.ErrorCode(err) {
	case "":
		return sse(views.ComposerSent(domain.NewNonce()))
	case domain.EINVALID, domain.ECONFLICT, domain.EUNAVAILABLE:
		// Only the error is patched: the message box keeps what was typed.
		return sse(views.ComposerError(domain.ErrorMessage(err)))
	}
	return err
}

// tooLarge explains a form that could not be read.
func tooLarge(err error) string {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Sprintf("The message is too long (at most %s): attach a large text as a file instead.", domain.ByteSize(domain.MaxMessageBytes))
	}
	return "The message could not be read; try again."
}

func (s *Server) handleRetry(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	err = s.runner.Retry(c.Request().Context(), conv.ID)
	switch domain.ErrorCode(err) {
	case "", domain.ECONFLICT:
		return c.NoContent(http.StatusNoContent)
	case domain.EUNAVAILABLE:
		return s.patch(c, c.Request().Context(), views.ComposerError(domain.ErrorMessage(err)))
	}
	return err
}

// handleStop stops the reply the agent is writing: the request to the model is cancelled, a
// remote task too, and what was written stays. The stream shows the run stopped.
func (s *Server) handleStop(c echo.Context) error {
	conv, err := s.writableConversation(c)
	if err != nil {
		return err
	}
	s.runner.StopReply(c.Request().Context(), conv.ID)
	return c.NoContent(http.StatusNoContent)
}

// conversationURL is where a conversation's page is.
func conversationURL(id int64) string { return fmt.Sprintf("/c/%d", id) }

// agentTitle is an agent's title as pages show it; its name for an agent no longer served.
func (s *Server) agentTitle(name string) string { return views.AgentTitle(s.runner.Agents(), name) }

// agentIcon is the icon drawn beside the messages of conv's agent: its own, else its back end's.
func (s *Server) agentIcon(conv domain.Conversation) string {
	if conv.Inbound() {
		return views.AgentIcon(domain.Info{Kind: "inbound"})
	}
	a, _ := s.runner.Agent(conv.Agent)
	return views.AgentIcon(a)
}

// conversationAgent is who the person talks with in conv, as pages and the API name them.
func (s *Server) conversationAgent(conv domain.Conversation) string {
	return views.ConversationAgent(s.runner.Agents(), conv)
}
