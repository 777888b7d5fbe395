package openai

import (
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/parley-chat/parley/agent"
)

// faultf returns a fault of the agent with a formatted explanation and the underlying error.
func (a *Agent) faultf(err error, format string, args ...any) error {
	return agent.Faultf(a.info.Title, err, format, args...)
}

// requestFault explains why a request or its stream failed: what the watch saw first, then
// what the error says.
func (a *Agent) requestFault(err error, w *watch) error {
	status, contentType, body := w.response()
	var netErr *net.OpError
	var dnsErr *net.DNSError
	var streamErr *ssestream.StreamError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case w.stalled.Load() && !w.started.Load():
		return a.faultf(err, "the model endpoint at %s sent nothing for %s after the request (is the model still loading? raise first_byte_timeout)", a.endpoint, a.cfg.FirstByteTimeout)
	case w.stalled.Load():
		return a.faultf(err, "the model endpoint at %s sent nothing for %s: the reply stalled", a.endpoint, a.cfg.IdleTimeout)
	case status >= 400:
		return a.faultf(err, "the model endpoint at %s answered %d %s%s%s", a.endpoint, status, http.StatusText(status),
			errorDetail(body), statusHint(status))
	case errors.Is(err, syscall.ECONNREFUSED):
		return a.faultf(err, "cannot reach the model endpoint at %s: connection refused", a.endpoint)
	case errors.As(err, &dnsErr):
		return a.faultf(err, "cannot reach the model endpoint at %s: host %s not found", a.endpoint, dnsErr.Name)
	case errors.As(err, &netErr):
		return a.faultf(err, "cannot reach the model endpoint at %s: %v", a.endpoint, netErr.Err)
	case errors.As(err, &streamErr):
		return a.faultf(err, "the model endpoint at %s reported an error while streaming%s", a.endpoint, errorDetail(streamErr.Event.Data))
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
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

// errorDetail reads the message of an error body in the shapes endpoints use:
// {"error":{"message":...,"type":...}} (OpenAI, vLLM), {"error":"..."} (Ollama),
// {"message":...} or {"detail":...}; otherwise short plain text. It returns ": message"
// or "".
func errorDetail(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message any             `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &doc) == nil {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(doc.Error, &obj) == nil && obj.Message != "":
			msg := obj.Message
			if obj.Type != "" {
				msg += " (" + obj.Type + ")"
			} else if code, ok := obj.Code.(string); ok && code != "" {
				msg += " (" + code + ")"
			}
			return ": " + agent.OneLine(msg)
		case json.Unmarshal(doc.Error, &s) == nil && s != "":
			return ": " + agent.OneLine(s)
		}
		for _, v := range []any{doc.Message, doc.Detail} {
			if s, ok := v.(string); ok && s != "" {
				return ": " + agent.OneLine(s)
			}
		}
		return ""
	}
	if s := strings.TrimSpace(string(body)); s != "" && utf8.ValidString(s) && !strings.HasPrefix(s, "<") {
		return ": " + agent.OneLine(s)
	}
	return ""
}
