package httpx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// Problem is an error ready to be written: its status, stable code, message
// and the offending field, if any.
type Problem struct {
	Status  int
	Code    string
	Message string
	Field   string
	// RetryAfter is the Retry-After of a 503, in seconds (0 for other
	// statuses).
	RetryAfter int
}

// statusRow is one row of the status table: an error for which
// errors.Is(err, kind) holds is answered with status and code, and with
// message, or the error's own text when message is "".
type statusRow struct {
	kind    error
	status  int
	code    string
	message string
}

// statusTable maps error kinds to statuses. ProblemOf walks it in order and
// the first row whose kind the error is wins, so an error of several kinds
// gets the earliest. Read-only.
var statusTable = []statusRow{
	{domain.ErrInvalid, http.StatusBadRequest, "invalid_request", ""},
	{domain.ErrUnauthenticated, http.StatusUnauthorized, "invalid_api_key", ""},
	{domain.ErrForbidden, http.StatusForbidden, "forbidden", ""},
	{domain.ErrNotFound, http.StatusNotFound, "not_found", ""},
	{domain.ErrConflict, http.StatusConflict, "conflict", ""},
	{domain.ErrConcurrency, http.StatusConflict, "conflict", ""},
	{domain.ErrRateLimited, http.StatusTooManyRequests, "rate_limited", ""},
	{ErrHeadersTooLarge, http.StatusRequestHeaderFieldsTooLarge, "headers_too_large", ""},
	{ErrTooLarge, http.StatusRequestEntityTooLarge, "body_too_large", ""},
	{ErrRequestTimeout, http.StatusRequestTimeout, "request_timeout", ""},
	{ErrMisdirected, http.StatusMisdirectedRequest, "misdirected_request", ""},
	{errMethod, http.StatusMethodNotAllowed, "method_not_allowed", ""},
	{domain.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", unavailableMessage},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, "unavailable", unavailableMessage},
}

const (
	unavailableMessage = "temporarily unavailable; retry shortly"
	// internalMessage is all a 500 says: nothing about internals.
	internalMessage = "internal error; the request id in the response headers identifies it in the logs"
)

// ProblemOf maps an error to a Problem, in this order:
//
//  1. TranslateDB: a PostgreSQL outage becomes domain.ErrUnavailable;
//  2. the first row of statusTable whose kind errors.Is finds; an error of
//     no known kind is a 500 whose message says nothing about internals;
//  3. an *http.MaxBytesError (errors.As) is a 413 body_too_large, whatever
//     the table said;
//  4. below 500, a *domain.Error (errors.As) gives its code, message and
//     field;
//  5. every 503 has a RetryAfter (DatabaseRetryAfter), and an outage's
//     503 is database_unavailable with its message.
func ProblemOf(err error) Problem {
	err = TranslateDB(err)
	p := Problem{Status: http.StatusInternalServerError, Code: "internal_error", Message: internalMessage}
	for _, row := range statusTable {
		if errors.Is(err, row.kind) {
			p = Problem{Status: row.status, Code: row.code, Message: row.message}
			if p.Message == "" {
				p.Message = err.Error()
			}
			break
		}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		p = Problem{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("the request body is over the limit of %d bytes", mbe.Limit)}
	}
	var de *domain.Error
	if errors.As(err, &de) && p.Status < 500 {
		p.Code, p.Message, p.Field = de.Code, de.Message, de.Field
	}
	if p.Status == http.StatusServiceUnavailable {
		p.RetryAfter = DatabaseRetryAfter
		if errors.As(err, &de) && de.Code == errDatabaseUnavailable.Code {
			p.Code, p.Message = de.Code, de.Message
		}
	}
	return p
}

// retryAfter is an error that says when to retry (a key's limits'
// refusal, commands/spend.Refusal): its 429 carries it as Retry-After.
type retryAfter interface{ RetryAfterSeconds() int }

// ProblemFor is ProblemOf for the error a service's responder is about to
// write on c: it records err on c (c.Error), so that the access log writes
// the cause of every 5xx with the request id; it sets Retry-After on a
// 503 unless the handler set one already (the answer service's search
// outage has its own); and when the request's body was not read to its
// end (a 401 before the body, a 408, a 413) it closes the connection
// after the answer, so the answer goes out at once instead of after
// net/http has read the rest of the body.
func ProblemFor(c *gin.Context, err error) Problem {
	p := ProblemOf(err)
	_ = c.Error(err)
	if p.RetryAfter > 0 && c.Writer.Header().Get("Retry-After") == "" {
		c.Header("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	var ra retryAfter
	if p.Status == http.StatusTooManyRequests && errors.As(err, &ra) && c.Writer.Header().Get("Retry-After") == "" {
		c.Header("Retry-After", strconv.Itoa(ra.RetryAfterSeconds()))
	}
	if bodyUnread(c) {
		c.Header("Connection", "close")
	}
	return p
}
