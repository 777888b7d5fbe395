package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/starfederation/datastar-go/datastar"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// resolver resolves the question rec (as read before) with what the form holds, as by.
type resolver func(rec domain.QuestionRecord, form map[string][]string, by domain.Actor) (domain.QuestionRecord, error)

// handleAnswer validates and stores an answer. Invalid input comes back as the same form with
// per-field errors and the typed values; a repeated post (double click, a second tab, a
// retried request) finds the question resolved and shows that, storing nothing twice.
func (s *Server) handleAnswer(c echo.Context) error {
	return s.resolveQuestion(c, func(rec domain.QuestionRecord, form map[string][]string, by domain.Actor) (domain.QuestionRecord, error) {
		files, refused, err := s.uploads.answerFiles(c, rec.Question)
		if err != nil {
			return rec, err
		}
		if len(refused) > 0 && rec.Pending() {
			// Nothing is stored while a file is refused: its reason goes next to its field,
			// with every other field's error, so that one submit shows them all. The page
			// keeps the files it was given (the form is morphed, and its file inputs with it).
			return rec, domain.AnswerErrors(rec.Question, form, files, refused)
		}
		return s.runner.Answer(c.Request().Context(), rec, form, files, by)
	})
}

func (s *Server) handleDecline(c echo.Context) error {
	return s.resolveQuestion(c, func(rec domain.QuestionRecord, form map[string][]string, by domain.Actor) (domain.QuestionRecord, error) {
		return s.runner.Decline(c.Request().Context(), rec, first(form["_reason"]), by)
	})
}

func (s *Server) handleCancel(c echo.Context) error {
	return s.resolveQuestion(c, func(rec domain.QuestionRecord, form map[string][]string, by domain.Actor) (domain.QuestionRecord, error) {
		return s.runner.Cancel(c.Request().Context(), rec, by)
	})
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// resolveQuestion checks that the signed-in person may resolve the question (its owner, or
// staff on the owner's behalf where allowed), resolves it, and patches its card. The status
// says the outcome, as the API's does: 200 resolved now, 422 not (field messages or a
// notice, with what was typed), 409 resolved before (the card as it stands).
func (s *Server) resolveQuestion(c echo.Context, resolve resolver) error {
	id, err := paramID(c)
	if err != nil {
		return err
	}
	rec, mode, err := s.answerable(c, id)
	if err != nil {
		return err
	}
	// The card knows its viewer: an approver sees their approval counted, not the form again.
	ctx := views.WithViewer(views.WithMode(c.Request().Context(), mode), views.Viewer{ID: currentUser(c).ID, Name: currentUser(c).Name})
	form, err := c.FormParams()
	if err != nil {
		// Too large to read at all: the question says so, as it stands.
		return s.patchStatus(c, ctx, formStatus(err), views.QuestionCard(views.QuestionView{Record: rec, Notice: s.uploads.unreadable(err)}),
			datastar.WithSelectorID(views.QuestionID(id)))
	}
	rec, err = resolve(rec, form, actor(c, mode))
	view := views.QuestionView{Record: rec}
	status := http.StatusOK
	var ferrs domain.FieldErrors
	switch {
	case errors.As(err, &ferrs):
		view.Values, view.Errors = form, ferrs
		status = http.StatusUnprocessableEntity
	case domain.ErrorCode(err) == domain.ENOTFOUND:
		return err
	case err != nil && domain.ErrorCode(err) != domain.ECONFLICT:
		if domain.ErrorCode(err) == domain.EINTERNAL {
			s.log.Error("resolve question", "question", id, "error", err)
		}
		view.Values, view.Notice = form, domain.ErrorMessage(err)
		status = statusOf(err)
	default:
		// Stored (or stored before: 409): show the question as it stands now.
		if err != nil {
			status = http.StatusConflict
		}
		if view.Record, err = s.questions.Question(ctx, id); err != nil {
			return err
		}
		// Resolved: the card offers its rating to whoever resolved it.
		if conv, cerr := s.ledger.Conversation(ctx, view.Record.ConversationID); cerr == nil {
			if ctx, err = s.withFeedback(ctx, currentUser(c), conv, true); err != nil {
				return err
			}
		}
	}
	return s.patchStatus(c, ctx, status, views.QuestionCard(view), datastar.WithSelectorID(views.QuestionID(id)))
}

// formStatus is the status of a form that could not be read: 413 when too large, else 400.
func formStatus(err error) int {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// questionVisible checks that the person may see the question: it is for them (see
// store.QuestionFor), or its conversation is one they may read. Anyone else gets ENOTFOUND.
func (s *Server) questionVisible(c echo.Context, rec domain.QuestionRecord) error {
	forYou, err := s.questions.QuestionFor(c.Request().Context(), rec.ID, currentUser(c).ID)
	if err != nil || forYou {
		return err
	}
	if _, err := s.readable(c, rec.ConversationID); err != nil {
		return domain.QuestionNotFound(rec.ID)
	}
	return nil
}

// handleQuestionPage shows a question alone: for a group's members, who cannot open the
// conversation it is in. A question of the person's own goes to its conversation.
func (s *Server) handleQuestionPage(c echo.Context) error {
	id, err := paramID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	rec, err := s.questions.Question(ctx, id)
	if err != nil {
		return err
	}
	conv, err := s.ledger.Conversation(ctx, rec.ConversationID)
	if err != nil {
		return err
	}
	u := currentUser(c)
	forYou, err := s.questions.QuestionFor(ctx, rec.ID, u.ID)
	if err != nil {
		return err
	}
	if !forYou && !u.CanRead(conv) {
		return domain.QuestionNotFound(rec.ID)
	}
	if !rec.Routed() && u.CanWrite(conv) {
		// The owner's own question (escalated to others too, maybe): in their conversation.
		return c.Redirect(http.StatusSeeOther, conversationURL(conv.ID)+"#"+views.QuestionID(rec.ID))
	}
	mode, err := s.answererMode(c, rec, conv, forYou)
	if err != nil && domain.ErrorCode(err) != domain.EFORBIDDEN {
		return err
	}
	if err != nil {
		// Theirs to read, not to answer: the card says whom it waits for.
		mode = s.modeFor(u, conv)
		mode.Groups = s.viewerGroups(c)
	}
	d := views.QuestionPageData{View: views.QuestionView{Record: rec}, Owner: ownerName(conv)}
	if rec.Gate && rec.Routed() {
		// Its approvers decide by the conversation that led to it: shown read-only.
		if d.Context, err = s.contextOf(ctx, conv, rec.ID); err != nil {
			return err
		}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	fctx, err := s.withFeedback(views.WithMode(ctx, mode), u, conv, forYou)
	if err != nil {
		return err
	}
	c.SetRequest(c.Request().WithContext(fctx))
	return s.page(c, http.StatusOK, views.QuestionPage(d))
}

// contextOf is the conversation that led to the question, up to it (not included): what
// its approvers read before they decide. It is the version the question was asked in, as it
// was then, whatever the owner showed or wrote since; nil when the question is in none.
func (s *Server) contextOf(ctx context.Context, conv domain.Conversation, questionID int64) (*views.Thread, error) {
	vs, shown, err := s.ledger.Versions(ctx, conv.ID)
	if err != nil {
		return nil, err
	}
	// The version shown first: nearly always the one it was asked in.
	order := []int64{shown}
	for _, v := range vs {
		if v.N != shown {
			order = append(order, v.N)
		}
	}
	for _, n := range order {
		events, err := s.ledger.PathEvents(ctx, conv.ID, vs.Path(n), 0)
		if err != nil {
			return nil, err
		}
		for i, ev := range events {
			if ev.Kind == domain.EventQuestionAsked && ev.Question != nil && ev.Question.ID == questionID {
				t := views.BuildThread(events[:i])
				return &t, nil
			}
		}
	}
	return nil, nil
}
