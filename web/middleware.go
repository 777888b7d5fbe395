package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// MaxBodyBytes bounds a request body; larger posts fail to parse and get a clear message.
const MaxBodyBytes = 4 << 20

// uploadRoutes are the routes whose forms may carry files.
var uploadRoutes = map[string]bool{"/conversations": true, "/c/:id/messages": true, "/questions/:id/answer": true,
	apiPrefix + "/conversations": true, apiPrefix + "/conversations/:id/messages": true, apiPrefix + "/questions/:id/answer": true}

// limitBody caps request bodies so a huge paste cannot exhaust memory.
// Routes that take attached files accept the files' limits on top. A multipart form is
// read even when a file's name has control characters (see tolerantParts).
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Body != nil {
			limit := int64(MaxBodyBytes)
			if uploadRoutes[c.Path()] {
				limit = s.uploads.bodyLimit()
			}
			c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, limit)
			tolerantParts(c.Request())
		}
		return next(c)
	}
}

// recoverPanics turns a panicking handler into a logged 500 instead of a dropped connection.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				err = fmt.Errorf("panic in %s %s: %v", c.Request().Method, c.Request().URL.Path, p)
			}
		}()
		return next(c)
	}
}

// logRequests logs each request at debug level (SSE streams when they end).
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if s.log.Enabled(c.Request().Context(), slog.LevelDebug) {
			status := c.Response().Status
			if err != nil && !c.Response().Committed {
				status = statusOf(err)
			}
			s.log.Debug("request", "method", c.Request().Method, "path", c.Request().URL.Path,
				"status", status, "duration", time.Since(start))
		}
		return err
	}
}
