package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/starfederation/datastar-go/datastar"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// versionParam reads ?version=N, the version of conv a reader asks for; -1 without one.
func versionParam(c echo.Context) (int64, error) {
	v := c.QueryParam("version")
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, domain.Errorf(domain.EINVALID, "No such version: %q.", v)
	}
	return n, nil
}

// pinnedVersion is the version a reader who may not write in conv asks to read
// (?version=N, staff reading another version than the one shown); -1 for its owner, who
// reads the one shown, and when none is asked for.
func pinnedVersion(c echo.Context, conv domain.Conversation) int64 {
	n, err := versionParam(c)
	if err != nil || currentUser(c).CanWrite(conv) {
		return -1
	}
	return n
}

// versionThread reads version n of conv (-1: the one it shows) as the page shows it, with
// the controls that move between versions where they differ, from one read of its
// versions. It returns the version read, its path and how many versions there are.
func (s *Server) versionThread(ctx context.Context, conv domain.Conversation, n int64) (views.Thread, domain.Path, int64, int, error) {
	vs, shown, err := s.ledger.Versions(ctx, conv.ID)
	if err != nil {
		return views.Thread{}, nil, 0, 0, err
	}
	if n < 0 {
		n = shown
	}
	if _, ok := vs.Find(n); !ok {
		return views.Thread{}, nil, 0, 0, domain.NoVersion(conv.ID, n)
	}
	path := vs.Path(n)
	events, err := s.ledger.PathEvents(ctx, conv.ID, path, 0)
	if err != nil {
		return views.Thread{}, nil, 0, 0, err
	}
	return views.BuildThread(events).WithVersions(conv.ID, vs.Choices(n)), path, n, len(vs), nil
}

// handleRegenerate asks the agent for another answer to the person's last message, in a
// new version of the conversation; the page redraws from the stream.
func (s *Server) handleRegenerate(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.runner.Regenerate(ctx, conv.ID, currentUser(c).Name, c.FormValue("nonce")); err != nil {
		return s.composerProblem(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// handleEditForm puts the edit form of one of the person's messages in its place.
func (s *Server) handleEditForm(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	id, err := strconv.ParseInt(c.Param("event"), 10, 64)
	if err != nil {
		return notFound(conv.ID)
	}
	ev, err := s.ledger.Event(ctx, conv.ID, id)
	if err != nil {
		return err
	}
	vs, shown, err := s.ledger.Versions(ctx, conv.ID)
	if err != nil {
		return err
	}
	if ev.Kind != domain.EventUserMessage || !vs.Path(shown).Has(ev.Version, ev.ID) {
		return domain.Errorf(domain.ENOTFOUND, "Message %d is not one of yours in the version shown.", id)
	}
	mctx, err := s.withMode(c, conv)
	if err != nil {
		return err
	}
	return s.patch(c, mctx, views.EditForm(views.UserItem(ev)), datastar.WithSelectorID(views.UserMessageID(ev.ID)), datastar.WithModeAppend())
}

// handleEditMessage sends an edited message in place of one already sent, in a new version
// of the conversation. A refused edit says why under the form, which keeps what was typed.
func (s *Server) handleEditMessage(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	msg, err := strconv.ParseInt(c.Param("event"), 10, 64)
	if err != nil {
		return notFound(conv.ID)
	}
	u := currentUser(c)
	if err := s.allowMessage(u); err != nil {
		return err
	}
	ctx := c.Request().Context()
	_, err = s.runner.Edit(ctx, conv.ID, msg, domain.Message{Text: c.FormValue("text"), Author: u.Name, UserID: u.ID, Nonce: c.FormValue("nonce")})
	switch domain.ErrorCode(err) {
	case "":
		return c.NoContent(http.StatusNoContent)
	case domain.EINVALID, domain.ECONFLICT, domain.EUNAVAILABLE, domain.ENOTFOUND:
		return s.patch(c, ctx, views.EditError(msg, domain.ErrorMessage(err)))
	}
	return err
}

// handleChooseVersion shows another version of the conversation ("‹ 2 / 3 ›").
func (s *Server) handleChooseVersion(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(c.Param("n"), 10, 64)
	if err != nil {
		return notFound(conv.ID)
	}
	if err := s.ledger.ChooseVersion(c.Request().Context(), conv.ID, n, currentUser(c).Name); err != nil {
		return s.composerProblem(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// handleRemoveQueued takes back a queued message before it is sent.
func (s *Server) handleRemoveQueued(c echo.Context) error {
	conv, err := s.writableConversation(c)
	if err != nil {
		return err
	}
	q, err := strconv.ParseInt(c.Param("queued"), 10, 64)
	if err != nil {
		return notFound(conv.ID)
	}
	err = s.ledger.Unqueue(c.Request().Context(), conv.ID, q, currentUser(c).Name)
	if err != nil && domain.ErrorCode(err) != domain.ENOTFOUND { // gone already: the page learns it from the stream
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// handleSendQueued sends the queued messages now, stopping the reply being written.
func (s *Server) handleSendQueued(c echo.Context) error {
	conv, err := s.workableConversation(c)
	if err != nil {
		return err
	}
	if err := s.runner.SendQueued(c.Request().Context(), conv.ID); err != nil {
		return s.composerProblem(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// composerProblem shows under the message box why an action on the conversation was
// refused; other errors go to the error handler.
func (s *Server) composerProblem(c echo.Context, err error) error {
	switch domain.ErrorCode(err) {
	case domain.EINVALID, domain.ECONFLICT, domain.EUNAVAILABLE, domain.ENOTFOUND:
		return s.patch(c, c.Request().Context(), views.ComposerError(domain.ErrorMessage(err)), datastar.WithModeReplace())
	}
	return err
}

// versionFollow is what a stream follows of a conversation that has versions: the path of
// the version it shows (the conversation's, or one staff pinned).
type versionFollow struct {
	path   domain.Path
	pinned int64 // -1: the version the conversation shows, whichever it is
}

// load reads the path followed in conv as it was just read. Version 0, which branched from
// nothing, is all its own events: most conversations are read no further.
func (vf *versionFollow) load(ctx context.Context, s *Server, conv domain.Conversation) error {
	if vf.pinned < 0 && conv.Version == 0 {
		vf.path = domain.Path{{Version: 0}}
		return nil
	}
	vs, shown, err := s.ledger.Versions(ctx, conv.ID)
	if err != nil {
		return err
	}
	if vf.pinned >= 0 {
		shown = vf.pinned
	}
	vf.path = vs.Path(shown)
	return nil
}

// shows reports whether a stream shows ev: an event of the path it follows, or of the
// conversation's queue (which is the conversation's, whatever version shows). A version
// event needs the stream redrawn (switched).
func (vf *versionFollow) shows(ev domain.Event) (show, switched bool) {
	switch ev.Kind {
	case domain.EventVersion:
		return false, vf.pinned < 0
	case domain.EventMessageQueued, domain.EventMessageUnqueued:
		return true, false
	}
	return vf.path == nil || vf.path.Has(ev.Version, ev.ID), false
}
