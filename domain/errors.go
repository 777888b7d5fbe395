package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Error codes, mapped to HTTP statuses in one place by the web layer.
const (
	ENOTFOUND = "not_found"
	EINVALID  = "invalid"
	ECONFLICT = "conflict"
	EINTERNAL = "internal"
	// EUNAUTHORIZED is a request from nobody signed in; EFORBIDDEN one from somebody who may
	// not do what they asked; ETOOMANY one over a rate or a cap.
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ETOOMANY      = "too_many"
	// EUNAVAILABLE is a request Parley cannot serve now but may later: its database cannot
	// be written (a full disk, a read-only file system).
	EUNAVAILABLE = "unavailable"
)

// Error is a domain error with a code and a message safe to show a person.
type Error struct {
	Code    string
	Message string
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for any other error.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// ErrorMessage returns the message a person may read: the *Error's, or a generic one.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Something went wrong on our side."
}

// fault is a back end's failed step, explained for the person reading the conversation.
type fault struct {
	msg string
	err error
}

func (f *fault) Error() string { return f.msg }
func (f *fault) Unwrap() error { return f.err }

// Faultf returns a back end's error that names the agent (the runner shows and logs errors as
// they are) with a formatted explanation, keeping the underlying error for errors.Is/As.
func Faultf(agentTitle string, err error, format string, args ...any) error {
	return &fault{msg: agentTitle + ": " + fmt.Sprintf(format, args...), err: err}
}

// IsFault reports whether err is (or wraps) an error made by Faultf.
func IsFault(err error) bool {
	var f *fault
	return errors.As(err, &f)
}

// OneLine shortens a remote's message to one readable line for an error a person reads.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		return string(r[:300]) + "…"
	}
	return s
}

// ErrStopped is why a step stops when the person stops it: its run ends stopped, with the
// text written so far, and Retry continues it.
var ErrStopped = errors.New("stopped by the person")

// ErrRunning is why a message is refused while the agent still works on the last one.
var ErrRunning = Errorf(ECONFLICT, "The agent is still working; stop it, or wait for it to finish or ask.")

// ErrorDetail reads the message of an error body in the shapes endpoints use:
// {"error":{"message":...,"type":...}} (OpenAI, vLLM), {"error":"..."} (Ollama),
// {"message":...} or {"detail":...}; otherwise short plain text. It returns ": message"
// or "". Every back end explains a remote's error body through it.
func ErrorDetail(body []byte) string {
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
			return ": " + OneLine(msg)
		case json.Unmarshal(doc.Error, &s) == nil && s != "":
			return ": " + OneLine(s)
		}
		for _, v := range []any{doc.Message, doc.Detail} {
			if s, ok := v.(string); ok && s != "" {
				return ": " + OneLine(s)
			}
		}
		return ""
	}
	if s := strings.TrimSpace(string(body)); s != "" && utf8.ValidString(s) && !strings.HasPrefix(s, "<") {
		return ": " + OneLine(s)
	}
	return ""
}

// Unreachable says why a request reached no server: the connection was refused, the host
// is unknown, or the network failed; "" for any other error.
func Unreachable(err error) string {
	var dnsErr *net.DNSError
	var netErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "host " + dnsErr.Name + " not found"
	case errors.As(err, &netErr):
		return netErr.Err.Error()
	}
	return ""
}

// ErrFenced is what a ledger shared by several instances answers a step's write with once
// the step is no longer this instance's: another took its run over (see WithStep).
var ErrFenced = errors.New("another instance took the step's run over: its writes are refused")

type stepKey struct{}

// WithStep marks ctx as a step's: a ledger that several instances share lets the writes made
// with it land only while the step is still started and this instance's, checked under its
// conversation's lock, the lock a takeover interrupts the step under. The step's id and its
// owner are the fence.
func WithStep(ctx context.Context, stepID int64) context.Context {
	return context.WithValue(ctx, stepKey{}, stepID)
}

// StepOf is the step ctx was marked with, 0 when none.
func StepOf(ctx context.Context) int64 {
	id, _ := ctx.Value(stepKey{}).(int64)
	return id
}
