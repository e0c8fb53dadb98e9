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

// ProblemOf maps an error to a Problem with errors.Is / errors.As. Errors of
// no known kind are 500s whose message says nothing about internals. A
// PostgreSQL outage (see TranslateDB) is a 503 database_unavailable; every
// 503 has a RetryAfter.
func ProblemOf(err error) Problem {
	err = TranslateDB(err)
	var de *domain.Error
	p := Problem{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error; the request id in the response headers identifies it in the logs"}
	switch {
	case errors.Is(err, domain.ErrInvalid):
		p = Problem{Status: http.StatusBadRequest, Code: "invalid_request", Message: err.Error()}
	case errors.Is(err, domain.ErrUnauthenticated):
		p = Problem{Status: http.StatusUnauthorized, Code: "invalid_api_key", Message: err.Error()}
	case errors.Is(err, domain.ErrForbidden):
		p = Problem{Status: http.StatusForbidden, Code: "forbidden", Message: err.Error()}
	case errors.Is(err, domain.ErrNotFound):
		p = Problem{Status: http.StatusNotFound, Code: "not_found", Message: err.Error()}
	case errors.Is(err, domain.ErrConflict), errors.Is(err, domain.ErrConcurrency):
		p = Problem{Status: http.StatusConflict, Code: "conflict", Message: err.Error()}
	case errors.Is(err, domain.ErrRateLimited):
		p = Problem{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: err.Error()}
	case errors.Is(err, ErrHeadersTooLarge):
		p = Problem{Status: http.StatusRequestHeaderFieldsTooLarge, Code: "headers_too_large", Message: err.Error()}
	case errors.Is(err, ErrTooLarge):
		p = Problem{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: err.Error()}
	case errors.Is(err, ErrMisdirected):
		p = Problem{Status: http.StatusMisdirectedRequest, Code: "misdirected_request", Message: err.Error()}
	case errors.Is(err, errMethod):
		p = Problem{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: err.Error()}
	case errors.Is(err, domain.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		p = Problem{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "temporarily unavailable; retry shortly"}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		p = Problem{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("the request body is over the limit of %d bytes", mbe.Limit)}
	}
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

// ProblemFor is ProblemOf for the error a service's responder is about to
// write on c: it records err on c (c.Error), so that the access log writes
// the cause of every 5xx with the request id, and it sets Retry-After on a
// 503 unless the handler set one already (the answer service's search
// outage has its own).
func ProblemFor(c *gin.Context, err error) Problem {
	p := ProblemOf(err)
	_ = c.Error(err)
	if p.RetryAfter > 0 && c.Writer.Header().Get("Retry-After") == "" {
		c.Header("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	return p
}
