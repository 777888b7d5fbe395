package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/starfederation/datastar-go/datastar"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// People say what they thought of each agent reply (good or bad) and each question once
// answered or declined (useful or unneeded): one opinion a person an item, changeable,
// taken back. A reply is rated by its conversation's owner; a question by its owner or the
// people it was for. Anyone else finds nothing to rate (404), staff reading included.

// feedbackTarget reads the item of a conversation the signed-in person may rate, as the
// opinion they would give of it.
func (s *Server) feedbackTarget(c echo.Context, convID int64, item domain.FeedbackItem, itemID int64) (domain.Feedback, error) {
	ctx := c.Request().Context()
	u := currentUser(c)
	f := domain.Feedback{ConversationID: convID, Item: item, ItemID: itemID, UserID: u.ID, By: u.Name}
	conv, err := s.ledger.Conversation(ctx, convID)
	if err != nil {
		return f, err
	}
	owner := conv.UserID != 0 && conv.UserID == u.ID
	switch item {
	case domain.ItemReply:
		ev, err := s.ledger.Event(ctx, convID, itemID)
		if err != nil && domain.ErrorCode(err) != domain.ENOTFOUND {
			return f, err
		}
		if err != nil || ev.Kind != domain.EventAgentMessage || !owner {
			return f, domain.Errorf(domain.ENOTFOUND, "Reply %d not found.", itemID)
		}
		return f, nil
	case domain.ItemQuestion:
		q, err := s.questions.Question(ctx, itemID)
		if err != nil && domain.ErrorCode(err) != domain.ENOTFOUND {
			return f, err
		}
		if err != nil || q.ConversationID != convID {
			return f, domain.QuestionNotFound(itemID)
		}
		if owner {
			return f, nil
		}
		if forYou, err := s.questions.QuestionFor(ctx, itemID, u.ID); err != nil || forYou {
			return f, err
		}
		return f, domain.QuestionNotFound(itemID)
	}
	return f, domain.Errorf(domain.ENOTFOUND, "There is no %q to rate.", item)
}

// handleFeedback is a toggle of a feedback bar (?rating=, empty to take the opinion back) or
// its form sent (send=1, with comment and reasons), and answers with the bar as it stands:
// after a negative toggle, open on "What was wrong?"; after the form, thanking them, or with
// what is wrong and what they typed (422).
func (s *Server) handleFeedback(c echo.Context) error {
	convID, err := paramID(c)
	if err != nil {
		return err
	}
	itemID, err := strconv.ParseInt(c.Param("item_id"), 10, 64)
	if err != nil {
		return domain.Errorf(domain.ENOTFOUND, "Nothing to rate here.")
	}
	f, err := s.feedbackTarget(c, convID, domain.FeedbackItem(c.Param("item")), itemID)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return domain.Errorf(domain.EINVALID, "The feedback could not be read.")
	}
	reasons, err := s.feedback.FeedbackReasons(ctx)
	if err != nil {
		return err
	}
	v := views.FeedbackView{ConversationID: convID, Item: f.Item, ItemID: itemID, Reasons: reasons}
	rating, send := domain.Rating(form.Get("rating")), form.Get("send") == "1"
	status := http.StatusOK
	if rating == "" {
		if err := s.feedback.DeleteFeedback(ctx, convID, f.Item, itemID, f.UserID); err != nil {
			return err
		}
	} else {
		f.Rating, f.Comment, f.Reasons = rating, form.Get("comment"), form["reasons"]
		clean, err := domain.CheckFeedback(f, reasons)
		switch {
		case err != nil && send && domain.ErrorCode(err) == domain.EINVALID:
			// Said next to the form, with what they typed; their opinion stands as it was.
			mine, rerr := s.myFeedback(ctx, f)
			if rerr != nil {
				return rerr
			}
			v.Mine, v.Open, v.Problem, v.Comment, v.Checked = mine, true, domain.ErrorMessage(err), f.Comment, f.Reasons
			if v.Checked == nil {
				v.Checked = []string{}
			}
			status = http.StatusUnprocessableEntity
		case err != nil:
			return err
		default:
			stored, err := s.feedback.SetFeedback(ctx, clean)
			if err != nil {
				return err
			}
			v.Mine, v.Open, v.Sent = &stored, !send && stored.Rating.Negative(), send
		}
	}
	return s.patchStatus(c, ctx, status, views.FeedbackBar(v), datastar.WithSelectorID(v.ElementID()))
}

// myFeedback is the person's opinion of f's item as stored, if any.
func (s *Server) myFeedback(ctx context.Context, f domain.Feedback) (*domain.Feedback, error) {
	all, err := s.feedback.Feedback(ctx, f.ConversationID, f.UserID)
	if err != nil {
		return nil, err
	}
	for _, m := range all {
		if m.Item == f.Item && m.ItemID == f.ItemID {
			return &m, nil
		}
	}
	return nil, nil
}

// withFeedback is ctx with the person's opinions of the conversation's items, when they
// rate them: its owner all of them; whoever answers its questions (answerer) those.
func (s *Server) withFeedback(ctx context.Context, u domain.User, conv domain.Conversation, answerer bool) (context.Context, error) {
	owner := conv.UserID != 0 && conv.UserID == u.ID
	if u.ID == 0 || !owner && !answerer {
		return ctx, nil
	}
	mine, err := s.feedback.Feedback(ctx, conv.ID, u.ID)
	if err != nil {
		return ctx, err
	}
	reasons, err := s.feedback.FeedbackReasons(ctx)
	if err != nil {
		return ctx, err
	}
	f := views.Feedback{Mine: map[views.FeedbackKey]domain.Feedback{}, Reasons: reasons, Replies: owner}
	for _, m := range mine {
		f.Mine[views.FeedbackKey{Item: m.Item, ID: m.ItemID}] = m
	}
	return views.WithFeedback(ctx, f), nil
}

// The JSON API: PUT an opinion of a reply or a question, DELETE to take it back.

func (s *Server) apiPutReplyFeedback(c echo.Context) error {
	return s.apiPutFeedback(c, domain.ItemReply, "event")
}

func (s *Server) apiDeleteReplyFeedback(c echo.Context) error {
	return s.apiDeleteFeedback(c, domain.ItemReply, "event")
}

func (s *Server) apiPutQuestionFeedback(c echo.Context) error {
	return s.apiPutFeedback(c, domain.ItemQuestion, "id")
}

func (s *Server) apiDeleteQuestionFeedback(c echo.Context) error {
	return s.apiDeleteFeedback(c, domain.ItemQuestion, "id")
}

// apiFeedbackTarget is the opinion an API request gives: of a reply (its conversation is
// :id, the reply :event) or a question (:id).
func (s *Server) apiFeedbackTarget(c echo.Context, item domain.FeedbackItem, param string) (domain.Feedback, error) {
	id, err := strconv.ParseInt(c.Param(param), 10, 64)
	if err != nil {
		return domain.Feedback{}, domain.Errorf(domain.ENOTFOUND, "Nothing to rate here.")
	}
	if item == domain.ItemReply {
		convID, err := paramID(c)
		if err != nil {
			return domain.Feedback{}, err
		}
		return s.feedbackTarget(c, convID, item, id)
	}
	q, err := s.questions.Question(c.Request().Context(), id)
	if err != nil {
		return domain.Feedback{}, err
	}
	return s.feedbackTarget(c, q.ConversationID, item, id)
}

func (s *Server) apiPutFeedback(c echo.Context, item domain.FeedbackItem, param string) error {
	f, err := s.apiFeedbackTarget(c, item, param)
	if err != nil {
		return err
	}
	var req api.FeedbackRequest
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, 64<<10))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return domain.Errorf(domain.EINVALID, "The body must be JSON: {\"rating\": \"%s\", \"comment\": \"…\", \"reasons\": […]}.", item.Ratings()[1])
	}
	ctx := c.Request().Context()
	reasons, err := s.feedback.FeedbackReasons(ctx)
	if err != nil {
		return err
	}
	f.Rating, f.Comment, f.Reasons = domain.Rating(req.Rating), req.Comment, req.Reasons
	clean, err := domain.CheckFeedback(f, reasons)
	if err != nil {
		return err
	}
	stored, err := s.feedback.SetFeedback(ctx, clean)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.FeedbackOf(stored))
}

func (s *Server) apiDeleteFeedback(c echo.Context, item domain.FeedbackItem, param string) error {
	f, err := s.apiFeedbackTarget(c, item, param)
	if err != nil {
		return err
	}
	if err := s.feedback.DeleteFeedback(c.Request().Context(), f.ConversationID, f.Item, f.ItemID, f.UserID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
