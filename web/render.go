package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/starfederation/datastar-go/datastar"

	"github.com/parley-chat/parley/views"
)

// page renders a full HTML page, with the signed-in person (if any) in its top bar: only a
// whole page needs them, so their count of waiting questions is read here, not for every
// request.
func (s *Server) page(c echo.Context, status int, comp templ.Component) error {
	ctx := c.Request().Context()
	if u := currentUser(c); u.ID != 0 {
		ctx = views.WithViewer(ctx, s.viewer(c, u))
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return comp.Render(ctx, c.Response())
}

// html renders a component to a string for an SSE patch. templ escapes markup but not a bare
// carriage return, which the SSE parser reads as a line end: agent text could then forge SSE
// fields (an id, a selector). It is written as a character reference instead.
//
// A component that fails to render is logged and gives an error: no patch goes out empty in
// silence.
func (s *Server) html(ctx context.Context, comp templ.Component) (string, error) {
	var buf bytes.Buffer
	if err := comp.Render(ctx, &buf); err != nil {
		s.log.Error("render", "component", fmt.Sprintf("%T", comp), "error", err)
		return "", fmt.Errorf("render: %w", err)
	}
	return strings.ReplaceAll(buf.String(), "\r", "&#13;"), nil
}

// patch answers a Datastar request with one patch of the page.
func (s *Server) patch(c echo.Context, ctx context.Context, comp templ.Component, opts ...datastar.PatchElementOption) error {
	return s.patchStatus(c, ctx, http.StatusOK, comp, opts...)
}

// patchStatus is patch under another status than 200: a request that failed (an invalid
// answer, 422) says so in its status and still shows why on the page. Datastar applies no
// patch from a response that is not a 200; app.js hands it such a response's patches.
func (s *Server) patchStatus(c echo.Context, ctx context.Context, status int, comp templ.Component, opts ...datastar.PatchElementOption) error {
	h, err := s.html(ctx, comp)
	if err != nil {
		return err
	}
	return newSSE(c, status).PatchElements(h, opts...)
}

// newSSE starts an SSE response under status: no write deadline, no proxy buffering, headers
// sent through echo.
func newSSE(c echo.Context, status int) *datastar.ServerSentEventGenerator {
	w := c.Response()
	_ = http.NewResponseController(w.Writer).SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(status)
	return datastar.NewSSE(w, c.Request())
}
