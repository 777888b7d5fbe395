package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
)

// apiListQuestions lists the questions waiting for the person, oldest first, each with its
// conversation; with ?everyone=true, staff get everyone's, as their inbox shows them.
func (s *Server) apiListQuestions(c echo.Context) error {
	if st := c.QueryParam("state"); st != "" && st != "pending" {
		return domain.Errorf(domain.EINVALID, "state can only be pending for now.")
	}
	u := currentUser(c)
	owner := u.ID
	if u.IsStaff() && c.QueryParam("everyone") == "true" {
		owner = 0
	}
	items, err := s.questions.Inbox(c.Request().Context(), owner, inboxLimit)
	if err != nil {
		return err
	}
	out := make([]api.Question, 0, len(items))
	for _, it := range items {
		q := api.QuestionOf(it.Question)
		conv := s.apiConversation(it.Conversation)
		q.Conversation = &conv
		out = append(out, q)
	}
	return c.JSON(http.StatusOK, api.QuestionList{Questions: out})
}

func (s *Server) apiGetQuestion(c echo.Context) error {
	id, err := paramID(c)
	if err != nil {
		return err
	}
	rec, err := s.questions.Question(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := s.questionVisible(c, rec); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.QuestionOf(rec))
}

// apiAnswer validates and stores an answer: {"values": {...}} as JSON, or a multipart form
// for file fields. Invalid values give 422 with a message per field (the browser's own),
// a question resolved before 409 with the question as it stands.
func (s *Server) apiAnswer(c echo.Context) error {
	return s.apiResolve(c, func(rec domain.QuestionRecord, by domain.Actor) (domain.QuestionRecord, error) {
		if !rec.Pending() {
			return rec, domain.ErrResolved
		}
		body, form, err := apiForm(c)
		if err != nil {
			return rec, err
		}
		var files map[string]domain.File
		if body != nil {
			var req api.Answer
			if raw := body["values"]; len(raw) > 0 && string(raw) != "null" && json.Unmarshal(raw, &req.Values) != nil {
				return rec, domain.Errorf(domain.EINVALID, `"values" must be an object of answers by field name.`)
			}
			if form, err = answerValues(rec.Question, req.Values); err != nil {
				return rec, err
			}
		} else {
			var refused domain.FieldErrors
			if files, refused, err = s.uploads.answerFiles(c, rec.Question); err != nil {
				return rec, err
			}
			if len(refused) > 0 {
				return rec, domain.AnswerErrors(rec.Question, form, files, refused)
			}
			if errs := unknownFields(rec.Question, form); len(errs) > 0 {
				return rec, errs
			}
		}
		return s.runner.Answer(c.Request().Context(), rec, form, files, by)
	})
}

func (s *Server) apiDecline(c echo.Context) error {
	return s.apiResolve(c, func(rec domain.QuestionRecord, by domain.Actor) (domain.QuestionRecord, error) {
		var req api.Decline
		if _, err := apiRequest(c, &req); err != nil {
			return rec, err
		}
		return s.runner.Decline(c.Request().Context(), rec, req.Reason, by)
	})
}

func (s *Server) apiCancel(c echo.Context) error {
	return s.apiResolve(c, func(rec domain.QuestionRecord, by domain.Actor) (domain.QuestionRecord, error) {
		return s.runner.Cancel(c.Request().Context(), rec, by)
	})
}

// apiResolve checks that the token's person may resolve the question (see answerable),
// resolves it and answers with the question as it stands.
func (s *Server) apiResolve(c echo.Context, resolve func(domain.QuestionRecord, domain.Actor) (domain.QuestionRecord, error)) error {
	id, err := paramID(c)
	if err != nil {
		return err
	}
	rec, mode, err := s.answerable(c, id)
	if err != nil {
		return err
	}
	_, err = resolve(rec, actor(c, mode))
	var ferrs domain.FieldErrors
	if errors.As(err, &ferrs) {
		return s.apiFail(c, http.StatusUnprocessableEntity, api.ErrorBody{Message: "Some answers need attention: see fields.", Fields: ferrs})
	}
	if err != nil && domain.ErrorCode(err) != domain.ECONFLICT {
		return err
	}
	// Stored, or resolved before (409): the question as it stands now.
	now, rerr := s.questions.Question(c.Request().Context(), id)
	if rerr != nil {
		return rerr
	}
	q := api.QuestionOf(now)
	if err != nil {
		return s.apiFail(c, http.StatusConflict, api.ErrorBody{Message: domain.ErrorMessage(err), Question: &q})
	}
	return c.JSON(http.StatusOK, q)
}

// answerValues turns the JSON values of an answer (api.Answer's) into the form the browser
// would send: a string as it is, a number as written, a boolean as "true" or "false", a list
// as repeated values, an object (for a JSON field) as its JSON text. A name the question has
// no field for is an error of its own, so that a script's typo does not pass as an empty
// answer.
func answerValues(q domain.Question, values map[string]json.RawMessage) (url.Values, error) {
	form := url.Values{}
	kinds := map[string]domain.FieldKind{}
	for _, f := range q.Fields {
		kinds[f.Name] = f.Kind
	}
	errs := unknownFields(q, values)
	for name, v := range values {
		kind, ok := kinds[name]
		switch {
		case !ok:
			continue
		case kind == domain.KindFile:
			errs[name] = "Send a file as multipart/form-data, in a part named after its field."
			continue
		}
		vs, ok := jsonFormValues(v)
		if !ok {
			errs[name] = "Must be a string, a number, a boolean or a list of strings."
			continue
		}
		form[name] = vs
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return form, nil
}

// jsonFormValues is one JSON value as form values.
func jsonFormValues(raw json.RawMessage) ([]string, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		return []string{x}, true
	case json.Number:
		return []string{x.String()}, true
	case bool:
		return []string{strconv.FormatBool(x)}, true
	case map[string]any:
		return []string{string(raw)}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			switch y := e.(type) {
			case string:
				out = append(out, y)
			case json.Number:
				out = append(out, y.String())
			case bool:
				out = append(out, strconv.FormatBool(y))
			default:
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

// unknownFields is an error for each name the question has no field for, so that a
// script's typo does not pass as an empty answer.
func unknownFields[V any](q domain.Question, values map[string]V) domain.FieldErrors {
	errs := domain.FieldErrors{}
	for name := range values {
		if !slices.ContainsFunc(q.Fields, func(f domain.Field) bool { return f.Name == name }) {
			errs[name] = "This question has no field named " + strconv.Quote(name) + "."
		}
	}
	return errs
}
