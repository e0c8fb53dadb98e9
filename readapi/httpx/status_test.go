package httpx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

const internalMessage = "internal error; the request id in the response headers identifies it in the logs"

// TestStatusTable pins ProblemOf's table: for every error kind, the status
// and the code and message it gives an error of that kind that is not a
// *domain.Error (the kind's own defaults), and that a *domain.Error of the
// kind keeps its code, message and field below 500.
func TestStatusTable(t *testing.T) {
	tests := []struct {
		name    string
		kind    error
		status  int
		code    string
		message string // "" is the error's own text
	}{
		{"invalid", domain.ErrInvalid, http.StatusBadRequest, "invalid_request", ""},
		{"unauthenticated", domain.ErrUnauthenticated, http.StatusUnauthorized, "invalid_api_key", ""},
		{"forbidden", domain.ErrForbidden, http.StatusForbidden, "forbidden", ""},
		{"not found", domain.ErrNotFound, http.StatusNotFound, "not_found", ""},
		{"conflict", domain.ErrConflict, http.StatusConflict, "conflict", ""},
		{"concurrency", domain.ErrConcurrency, http.StatusConflict, "conflict", ""},
		{"rate limited", domain.ErrRateLimited, http.StatusTooManyRequests, "rate_limited", ""},
		{"headers too large", httpx.ErrHeadersTooLarge, http.StatusRequestHeaderFieldsTooLarge, "headers_too_large", ""},
		{"body too large", httpx.ErrTooLarge, http.StatusRequestEntityTooLarge, "body_too_large", ""},
		{"misdirected", httpx.ErrMisdirected, http.StatusMisdirectedRequest, "misdirected_request", ""},
		{"unavailable", domain.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", "temporarily unavailable; retry shortly"},
		{"deadline", context.DeadlineExceeded, http.StatusServiceUnavailable, "unavailable", "temporarily unavailable; retry shortly"},
		{"unknown", errors.New("some bug"), http.StatusInternalServerError, "internal_error", internalMessage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := fmt.Errorf("doing the work: %w", tc.kind)
			want := httpx.Problem{Status: tc.status, Code: tc.code, Message: tc.message}
			if want.Message == "" {
				want.Message = err.Error()
			}
			if tc.status == http.StatusServiceUnavailable {
				want.RetryAfter = httpx.DatabaseRetryAfter
			}
			if got := httpx.ProblemOf(err); got != want {
				t.Fatalf("ProblemOf(%v) = %+v, want %+v", err, got, want)
			}

			de := fmt.Errorf("doing the work: %w", &domain.Error{Kind: tc.kind, Code: "own_code", Field: "own_field", Message: "own message"})
			if tc.status < 500 {
				want = httpx.Problem{Status: tc.status, Code: "own_code", Message: "own message", Field: "own_field"}
			} else {
				want.Message = tc.message // the kind's own: a 5xx says nothing of the error
			}
			if got := httpx.ProblemOf(de); got != want {
				t.Fatalf("ProblemOf(%v) = %+v, want %+v", de, got, want)
			}
		})
	}
}

// TestStatusPrecedence pins which rule wins when an error is of several
// kinds at once.
func TestStatusPrecedence(t *testing.T) {
	dbDown := &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}
	tests := []struct {
		name string
		err  error
		want httpx.Problem
	}{
		{"earlier row wins", errors.Join(domain.ErrNotFound, domain.ErrInvalid),
			httpx.Problem{Status: http.StatusBadRequest, Code: "invalid_request", Message: errors.Join(domain.ErrNotFound, domain.ErrInvalid).Error()}},
		{"conflict before rate limit", errors.Join(domain.ErrRateLimited, domain.ErrConcurrency),
			httpx.Problem{Status: http.StatusConflict, Code: "conflict", Message: errors.Join(domain.ErrRateLimited, domain.ErrConcurrency).Error()}},
		{"a 4xx before unavailable", errors.Join(domain.ErrUnavailable, domain.ErrForbidden),
			httpx.Problem{Status: http.StatusForbidden, Code: "forbidden", Message: errors.Join(domain.ErrUnavailable, domain.ErrForbidden).Error()}},
		{"max bytes over every row", errors.Join(domain.Invalid("bad_json", "body", "bad"), &http.MaxBytesError{Limit: 7}),
			httpx.Problem{Status: http.StatusRequestEntityTooLarge, Code: "bad_json", Message: "bad", Field: "body"}},
		{"max bytes alone", fmt.Errorf("reading: %w", &http.MaxBytesError{Limit: 7}),
			httpx.Problem{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: "the request body is over the limit of 7 bytes"}},
		{"database down first", fmt.Errorf("loading: %w", dbDown),
			httpx.Problem{Status: http.StatusServiceUnavailable, Code: "database_unavailable", RetryAfter: httpx.DatabaseRetryAfter,
				Message: fmt.Sprintf("the database is temporarily unreachable; retry in %d seconds", httpx.DatabaseRetryAfter)}},
		{"a domain 503 keeps the shared message", &domain.Error{Kind: domain.ErrUnavailable, Code: "search_unavailable", Message: "search is down"},
			httpx.Problem{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "temporarily unavailable; retry shortly", RetryAfter: httpx.DatabaseRetryAfter}},
		{"nil", nil, httpx.Problem{Status: http.StatusInternalServerError, Code: "internal_error", Message: internalMessage}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := httpx.ProblemOf(tc.err); got != tc.want {
				t.Fatalf("ProblemOf(%v) = %+v, want %+v", tc.err, got, tc.want)
			}
		})
	}
}

// TestStatusMethodNotAllowed covers the table's one row whose kind is
// unexported: a known path with a method it does not serve.
func TestStatusMethodNotAllowed(t *testing.T) {
	var logs bytes.Buffer
	rec := httptest.NewRecorder()
	testEngine(t, &logs).ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, "/ok", nil))
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("DELETE /ok: %d %s: %v", rec.Code, rec.Body, err)
	}
	if rec.Code != http.StatusMethodNotAllowed || body.Error.Code != "method_not_allowed" || body.Error.Message != "DELETE is not allowed on /ok; see /openapi.json" {
		t.Fatalf("DELETE /ok: %d %+v, want 405 method_not_allowed", rec.Code, body.Error)
	}
}
