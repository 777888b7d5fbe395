package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	sdk "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/parley-chat/parley/domain"
)

// faultf returns a fault of the agent with a formatted explanation and the underlying error.
func (a *Agent) faultf(err error, format string, args ...any) error {
	return domain.Faultf(a.title(), err, format, args...)
}

// callError is a protocol call that failed, with what its watch saw; events says how many
// events arrived before it failed.
type callError struct {
	method string
	w      *watch
	err    error
	events int
}

func (e *callError) Error() string { return e.method + ": " + e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// rpcCode is the JSON-RPC error code the agent answered with, 0 when there was none.
func (e *callError) rpcCode() int {
	if _, _, _, rpc, _, _ := e.w.snapshot(); rpc != nil {
		return rpc.Code
	}
	return 0
}

// JSON-RPC error codes of A2A v0.3 that change what Parley does.
const (
	codeTaskNotFound      = -32001
	codeTaskNotCancelable = -32002
	codeUnsupported       = -32004
)

// callFault explains a failed call: what the watch saw first, then what the error says.
func (a *Agent) callFault(e *callError) error {
	status, contentType, body, rpc, stalled, oversized := e.w.snapshot()
	var dnsErr *net.DNSError
	var netErr *net.OpError
	switch {
	case stalled:
		return a.faultf(e, "the agent at %s sent nothing for %s during %s: the stream stalled", a.endpoint, a.cfg.IdleTimeout, e.method)
	case oversized > 0:
		return a.faultf(e, "the agent at %s sent an event of %s during %s, more than the limit of %s (max_artifact_bytes)",
			a.endpoint, size(oversized), e.method, size(a.cfg.MaxArtifactBytes))
	case rpc != nil && e.events > 0:
		return a.faultf(e, "the agent at %s reported an error in the middle of %s: %s", a.endpoint, e.method, rpc.describe())
	case rpc != nil:
		return a.faultf(e, "the agent at %s answered %s with an error: %s", a.endpoint, e.method, rpc.describe())
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return a.faultf(e, "the agent at %s refused %s with HTTP %d %s%s: %s", a.endpoint, e.method, status, http.StatusText(status), domain.ErrorDetail(body), a.credentialHint())
	case status != 0 && status != http.StatusOK:
		return a.faultf(e, "the agent at %s answered %s with HTTP %d %s%s", a.endpoint, e.method, status, http.StatusText(status), domain.ErrorDetail(body))
	case errors.Is(e.err, syscall.ECONNREFUSED):
		return a.faultf(e, "cannot reach the agent at %s: connection refused", a.endpoint)
	case errors.As(e.err, &dnsErr):
		return a.faultf(e, "cannot reach the agent at %s: host %s not found", a.endpoint, dnsErr.Name)
	case errors.As(e.err, &netErr) && e.events == 0:
		return a.faultf(e, "cannot reach the agent at %s: %v", a.endpoint, netErr.Err)
	case errors.Is(e.err, context.DeadlineExceeded):
		return a.faultf(e, "the agent at %s did not answer %s in time", a.endpoint, e.method)
	case status == http.StatusOK && e.method != "tasks/get" && e.method != "tasks/cancel" && !isEventStream(contentType) && e.events == 0:
		return a.faultf(e, "the agent at %s answered %s with %q instead of an event stream", a.endpoint, e.method, contentType)
	case e.events > 0:
		return a.faultf(e, "the connection to the agent at %s broke in the middle of %s: %v", a.endpoint, e.method, e.err)
	}
	return a.faultf(e, "%s to the agent at %s failed: %v", e.method, a.endpoint, e.err)
}

// cardFault explains why the agent card could not be read.
func (a *Agent) cardFault(err error) error {
	var status *agentcard.ErrStatusNotOK
	var dnsErr *net.DNSError
	var netErr *net.OpError
	switch {
	case errors.As(err, &status) && (status.StatusCode == http.StatusUnauthorized || status.StatusCode == http.StatusForbidden):
		return a.faultf(err, "cannot read the agent card at %s: HTTP %s: %s", a.endpoint, status.Status, a.credentialHint())
	case errors.As(err, &status):
		return a.faultf(err, "cannot read the agent card at %s: HTTP %s", a.endpoint, status.Status)
	case errors.Is(err, syscall.ECONNREFUSED):
		return a.faultf(err, "cannot reach the agent at %s: connection refused", a.endpoint)
	case errors.As(err, &dnsErr):
		return a.faultf(err, "cannot reach the agent at %s: host %s not found", a.endpoint, dnsErr.Name)
	case errors.As(err, &netErr):
		return a.faultf(err, "cannot reach the agent at %s: %v", a.endpoint, netErr.Err)
	case errors.Is(err, context.DeadlineExceeded):
		return a.faultf(err, "cannot reach the agent at %s: no answer in %s", a.endpoint, callTimeout)
	}
	return a.faultf(err, "cannot read the agent card at %s: %v", a.endpoint, err)
}

// credentialHint says which setting holds the bearer token a 401 or 403 refused.
func (a *Agent) credentialHint() string {
	if a.cfg.Credential == "" {
		return "check the agent's bearer token"
	}
	return "check the bearer token set by " + a.cfg.Credential
}

// describe is the error as the person reads it: the agent's own message, its detail and code.
func (e *rpcError) describe() string {
	msg := domain.OneLine(e.Message)
	if msg == "" {
		msg = "no message"
	}
	var data struct {
		Error   string `json:"error"`
		Message string `json:"message"`
		Detail  string `json:"detail"`
	}
	if json.Unmarshal(e.Data, &data) == nil {
		for _, d := range []string{data.Error, data.Message, data.Detail} {
			if d = domain.OneLine(d); d != "" && !strings.Contains(msg, d) {
				msg += " (" + d + ")"
				break
			}
		}
	}
	return fmt.Sprintf("%s [JSON-RPC %d%s]", msg, e.Code, codeName(e.Code))
}

func codeName(code int) string {
	for c, err := range map[int]error{
		-32700: sdk.ErrParseError, -32600: sdk.ErrInvalidRequest, -32601: sdk.ErrMethodNotFound,
		-32602: sdk.ErrInvalidParams, -32603: sdk.ErrInternalError, codeTaskNotFound: sdk.ErrTaskNotFound,
		codeTaskNotCancelable: sdk.ErrTaskNotCancelable, codeUnsupported: sdk.ErrUnsupportedOperation,
		-32005: sdk.ErrUnsupportedContentType, -32006: sdk.ErrInvalidAgentResponse,
	} {
		if c == code {
			return ", " + err.Error()
		}
	}
	return ""
}

// size writes a byte count for people.
func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
