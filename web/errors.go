package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// statusOf maps domain error codes to HTTP statuses, in one place.
func statusOf(err error) int {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	switch domain.ErrorCode(err) {
	case domain.ENOTFOUND:
		return http.StatusNotFound
	case domain.EINVALID:
		return http.StatusUnprocessableEntity
	case domain.ECONFLICT:
		return http.StatusConflict
	case domain.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case domain.EFORBIDDEN:
		return http.StatusForbidden
	case domain.ETOOMANY:
		return http.StatusTooManyRequests
	case domain.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// handleError answers requests whose handler failed before anything was written: the API's
// in JSON, a page a person opened inside the layout, anything else as plain text.
func (s *Server) handleError(err error, c echo.Context) {
	err = s.health.Failed(err) // a damaged database file says so
	if c.Response().Committed {
		return
	}
	r := c.Request()
	forAPI := isAPI(r)
	status := statusOf(err)
	msg := domain.ErrorMessage(err)
	var he *echo.HTTPError
	var mbe *http.MaxBytesError
	switch {
	case forAPI && errors.As(err, &mbe):
		status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("The request is too large (at most %s).", domain.ByteSize(mbe.Limit))
	case forAPI && errors.As(err, &he) && he.Code == http.StatusNotFound:
		msg = "There is no such API route: see " + apiPrefix + "/openapi.json."
	case errors.As(err, &he):
		msg = http.StatusText(he.Code)
	}
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "error", err)
	}
	var ra *retryAfter
	if errors.As(err, &ra) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(ra.wait.Seconds())))
	}
	if forAPI {
		_ = s.apiFail(c, status, api.ErrorBody{Message: msg})
		return
	}
	if r.Method == http.MethodGet && r.Header.Get("Datastar-Request") == "" && strings.Contains(r.Header.Get("Accept"), "text/html") {
		// A page a person opened: the error inside the layout, with a way back.
		if err := s.page(c, status, views.ErrorPage(status, http.StatusText(status), msg)); err == nil {
			return
		}
	}
	_ = c.String(status, msg+"\n")
}

// paramID reads a positive integer path parameter; anything else is a 404.
func paramID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, domain.ErrNotFound
	}
	return id, nil
}
