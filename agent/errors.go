package agent

import (
	"errors"
	"fmt"
)

// Error codes, mapped to HTTP statuses in one place by the web layer.
const (
	ENOTFOUND = "not_found"
	EINVALID  = "invalid"
	ECONFLICT = "conflict"
	EINTERNAL = "internal"
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
