package domain

import (
	"errors"
	"fmt"
)

// The error kinds every layer maps into. Adapters translate their own errors
// into these (pgx.ErrNoRows to ErrNotFound, SQLSTATE 23505 to ErrConflict, a
// wrong expected version to ErrConcurrency); HTTP error responders map them
// to statuses with errors.Is.
var (
	// ErrNotFound: the thing asked for does not exist (or is not the caller's).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request contradicts the current state (a duplicate, a
	// limit reached).
	ErrConflict = errors.New("conflict")
	// ErrConcurrency: a write lost a race against another write to the same
	// stream; reload and retry.
	ErrConcurrency = errors.New("concurrency conflict")
	// ErrInvalid: the input is malformed or out of range.
	ErrInvalid = errors.New("invalid input")
	// ErrForbidden: the caller is known but its plan or role does not allow this.
	ErrForbidden = errors.New("forbidden")
	// ErrUnauthenticated: no valid credential was presented.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrUnavailable: a dependency is down or a bounded wait ran out; retry later.
	ErrUnavailable = errors.New("unavailable")
	// ErrRateLimited: the caller used up a quota of its plan (or of its IP
	// address) for the current window; retry when the window ends.
	ErrRateLimited = errors.New("rate limited")
)

// Error is a domain error with a stable machine-readable Code, a message that
// tells the caller what to fix, and optionally the input Field at fault.
// errors.Is(err, Kind) holds for it.
type Error struct {
	Kind    error
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the kind, so errors.Is(err, ErrConflict) works.
func (e *Error) Unwrap() error { return e.Kind }

// Invalid returns an ErrInvalid error about field.
func Invalid(code, field, format string, args ...any) *Error {
	return &Error{Kind: ErrInvalid, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Conflict returns an ErrConflict error.
func Conflict(code, format string, args ...any) *Error {
	return &Error{Kind: ErrConflict, Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns an ErrNotFound error.
func NotFound(code, format string, args ...any) *Error {
	return &Error{Kind: ErrNotFound, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Forbidden returns an ErrForbidden error.
func Forbidden(code, format string, args ...any) *Error {
	return &Error{Kind: ErrForbidden, Code: code, Message: fmt.Sprintf(format, args...)}
}

// RateLimited returns an ErrRateLimited error.
func RateLimited(code, format string, args ...any) *Error {
	return &Error{Kind: ErrRateLimited, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap prefixes *errp, when it is not nil, with what the function was
// doing: `defer domain.Wrap(&err, "reading the head of %s", name)` at the
// top of a function with a named error result wraps every error it
// returns once, in one place (pkgsite's derrors.Wrap). The cause stays
// reachable with errors.Is and errors.As.
func Wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}
