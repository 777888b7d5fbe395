package openai

import (
	"errors"
	"mime"
	"net/http"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/wire"
)

// faultf returns a fault of the agent with a formatted explanation and the underlying error.
func (a *Agent) faultf(err error, format string, args ...any) error {
	return domain.Faultf(a.info.Title, err, format, args...)
}

// requestFault explains why a request or its stream failed: what the watch saw first, then
// what the error says.
func (a *Agent) requestFault(err error, w *watch) error {
	status, contentType, body := w.response()
	var streamErr *streamError
	var syntaxErr *wire.SyntaxError
	var tooLarge *wire.TooLargeError
	switch {
	case w.stalled.Load() && !w.started.Load():
		return a.faultf(err, "the model endpoint at %s sent nothing for %s after the request (is the model still loading? raise first_byte_timeout)", a.endpoint, a.cfg.FirstByteTimeout)
	case w.stalled.Load():
		return a.faultf(err, "the model endpoint at %s sent nothing for %s: the reply stalled", a.endpoint, a.cfg.IdleTimeout)
	case status >= 400:
		return a.faultf(err, "the model endpoint at %s answered %d %s%s%s", a.endpoint, status, http.StatusText(status),
			domain.ErrorDetail(body), statusHint(status))
	case domain.Unreachable(err) != "":
		return a.faultf(err, "cannot reach the model endpoint at %s: %s", a.endpoint, domain.Unreachable(err))
	case errors.As(err, &streamErr):
		return a.faultf(err, "the model endpoint at %s reported an error while streaming%s", a.endpoint, domain.ErrorDetail(streamErr.data))
	case errors.As(err, &syntaxErr), errors.Is(err, wire.ErrNotObject), errors.As(err, &tooLarge):
		return a.faultf(err, "the model endpoint at %s sent a malformed chunk (%v)", a.endpoint, err)
	case status != 0 && !isEventStream(contentType):
		return a.faultf(err, "the model endpoint at %s answered with %q instead of an event stream: is the base URL right?", a.endpoint, contentType)
	}
	return a.faultf(err, "the request to the model endpoint at %s failed: %v", a.endpoint, err)
}

// isEventStream reports whether a response's content type is text/event-stream.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// statusHint suggests where to look for the usual causes of a status.
func statusHint(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "; check the agent's API key"
	case http.StatusNotFound:
		return "; check the base URL and the model name"
	case http.StatusTooManyRequests:
		return "; the endpoint limits the rate: wait, then retry"
	}
	return ""
}
