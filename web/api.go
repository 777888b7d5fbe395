package web

import (
	_ "embed"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

// The JSON API (/api/v1) does what a person does in the browser, for `parley chat` and for
// scripts. Every request but the OpenAPI document carries a personal access token as
// "Authorization: Bearer …": a token acts as its person, with exactly their access. A cookie
// never stands in for one, so token requests need no cross-site check (see routes).

// apiPrefix is where the API lives.
const apiPrefix = "/api/v1"

//go:embed openapi.json
var openAPI []byte

// apiRoutes adds the API to the route table.
func (s *Server) apiRoutes() {
	s.echo.GET(apiPrefix+"/openapi.json", func(c echo.Context) error {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPI)
	})
	s.echo.GET(apiPrefix+"/push/key", s.apiPushKey)
	s.echo.POST(apiPrefix+"/push/subscriptions", s.apiAddPush, s.requireTokenOrPage)
	s.echo.DELETE(apiPrefix+"/push/subscriptions", s.apiRemovePush, s.requireTokenOrPage)
	a := s.echo.Group(apiPrefix, s.requireToken)
	a.GET("/me", s.apiMe)
	a.GET("/agents", s.apiAgents)
	a.GET("/conversations", s.apiListConversations)
	a.POST("/conversations", s.apiCreateConversation)
	a.GET("/conversations/:id", s.apiGetConversation)
	a.POST("/conversations/:id/messages", s.apiSendMessage)
	a.POST("/conversations/:id/stop", s.apiStop)
	a.POST("/conversations/:id/retry", s.apiRetry)
	a.POST("/conversations/:id/regenerate", s.apiRegenerate)
	a.POST("/conversations/:id/messages/:event/edit", s.apiEditMessage)
	a.GET("/conversations/:id/versions", s.apiVersions)
	a.POST("/conversations/:id/versions/:n", s.apiChooseVersion)
	a.POST("/conversations/:id/queued/send", s.apiSendQueued)
	a.POST("/conversations/:id/queued/:queued/remove", s.apiRemoveQueued)
	a.GET("/conversations/:id/events", s.apiEvents)
	// A document of a message or an answer, and the conversation's JSON export: the page's
	// own handlers, which read only the person.
	a.GET("/conversations/:id/documents/:doc", s.handleDocument)
	a.GET("/conversations/:id/export", s.handleExportJSON)
	a.GET("/questions", s.apiListQuestions)
	a.GET("/questions/:id", s.apiGetQuestion)
	a.POST("/questions/:id/answer", s.apiAnswer)
	a.POST("/questions/:id/decline", s.apiDecline)
	a.POST("/questions/:id/cancel", s.apiCancel)
	a.PUT("/conversations/:id/replies/:event/feedback", s.apiPutReplyFeedback)
	a.DELETE("/conversations/:id/replies/:event/feedback", s.apiDeleteReplyFeedback)
	a.PUT("/questions/:id/feedback", s.apiPutQuestionFeedback)
	a.DELETE("/questions/:id/feedback", s.apiDeleteQuestionFeedback)
}

// tokenKey is where the access token of an API request is kept on the echo context.
const tokenKey = "parley.token"

// currentToken is the token an API request came with.
func currentToken(c echo.Context) store.Token {
	t, _ := c.Get(tokenKey).(store.Token)
	return t
}

// bearer reads the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// requireToken lets requests with a valid access token through, as the token's person.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, t, err := s.tokenUser(c.Request())
		if err != nil {
			return err
		}
		c.Set(userKey, u)
		c.Set(tokenKey, t)
		return next(c)
	}
}

// tokenUser is the person and the token of a request's "Authorization: Bearer" header, as
// the API and the servers of other protocols (MCP) take it.
func (s *Server) tokenUser(r *http.Request) (domain.User, store.Token, error) {
	secret, ok := bearer(r)
	if !ok {
		return domain.User{}, store.Token{}, domain.Errorf(domain.EUNAUTHORIZED, "Send an access token as \"Authorization: Bearer …\": make one on your settings page, or with parley token add NAME --user YOU.")
	}
	u, t, err := s.tokens.TokenUser(r.Context(), secret)
	if domain.ErrorCode(err) == domain.EUNAUTHORIZED {
		s.metrics.signinToken.Inc()
	}
	return u, t, err
}

// tokenPerson is tokenUser with the token's name, for the MCP server.
func (s *Server) tokenPerson(r *http.Request) (domain.User, string, error) {
	u, t, err := s.tokenUser(r)
	return u, t.Name, err
}

// isAPI reports whether a request is one of the API's.
func isAPI(r *http.Request) bool {
	return r.URL.Path == apiPrefix || strings.HasPrefix(r.URL.Path, apiPrefix+"/")
}

// apiCodes name the HTTP statuses of errors for programs.
var apiCodes = map[int]string{
	http.StatusBadRequest: "bad_request", http.StatusUnauthorized: "unauthorized", http.StatusForbidden: "forbidden",
	http.StatusNotFound: "not_found", http.StatusMethodNotAllowed: "method_not_allowed", http.StatusConflict: "conflict",
	http.StatusRequestEntityTooLarge: "too_large", http.StatusUnprocessableEntity: "invalid", http.StatusTooManyRequests: "too_many",
	http.StatusServiceUnavailable: "unavailable",
}

// apiFail answers an API request that failed, as JSON.
func (s *Server) apiFail(c echo.Context, status int, body api.ErrorBody) error {
	if body.Code = apiCodes[status]; body.Code == "" {
		body.Code = "internal"
	}
	if status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
	}
	return c.JSON(status, api.Error{Error: body})
}

// apiForm reads a request's fields, from a JSON object (values are returned as JSON) or a
// form (urlencoded or multipart, whose files the caller reads). A body that is neither, or
// not valid, is EINVALID.
func apiForm(c echo.Context) (jsonBody map[string]json.RawMessage, form url.Values, err error) {
	r := c.Request()
	ct, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	switch ct {
	case echo.MIMEApplicationJSON:
		if r.ContentLength == 0 {
			return map[string]json.RawMessage{}, nil, nil
		}
		if err := json.NewDecoder(r.Body).Decode(&jsonBody); err != nil {
			return nil, nil, bodyError(err, "The body is not a JSON object: %v.")
		}
		if jsonBody == nil {
			jsonBody = map[string]json.RawMessage{}
		}
		return jsonBody, nil, nil
	case echo.MIMEApplicationForm, echo.MIMEMultipartForm, "":
		if r.ContentLength == 0 && ct == "" {
			return map[string]json.RawMessage{}, nil, nil
		}
		form, err := c.FormParams()
		if err != nil {
			return nil, nil, bodyError(err, "The form could not be read: %v.")
		}
		return nil, form, nil
	}
	return nil, nil, domain.Errorf(domain.EINVALID, "Send JSON (application/json), or multipart/form-data with files.")
}

// bodyError is a body that could not be read: too large as it is (413), else EINVALID
// with msg, which formats the error.
func bodyError(err error, msg string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return domain.Errorf(domain.EINVALID, msg, err)
}

// stringField reads one text field of a request read by apiForm.
func stringField(jsonBody map[string]json.RawMessage, form url.Values, name string) (string, error) {
	if jsonBody == nil {
		return form.Get(name), nil
	}
	raw, ok := jsonBody[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", domain.Errorf(domain.EINVALID, "%q must be a string.", name)
	}
	return v, nil
}

// apiRequest reads a request's body (see apiForm) into req, a pointer to one of package api's
// request types: each of its text fields by its JSON name, as stringField reads it. form is
// the form the body was, nil when it was JSON.
func apiRequest(c echo.Context, req any) (form url.Values, err error) {
	body, form, err := apiForm(c)
	if err != nil {
		return nil, err
	}
	v := reflect.ValueOf(req).Elem()
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if v.Field(i).Kind() != reflect.String || name == "" || name == "-" {
			continue
		}
		text, err := stringField(body, form, name)
		if err != nil {
			return nil, err
		}
		v.Field(i).SetString(text)
	}
	return form, nil
}
