package httpx_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/readapi/httpx"
)

func TestProblemOf(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"validation", domain.Invalid("q_too_short", "q", "q must be at least 3 characters"), http.StatusBadRequest, "q_too_short"},
		{"key limit", fmt.Errorf("minting: %w", domain.Conflict("key_limit_reached", "already 5")), http.StatusConflict, "key_limit_reached"},
		{"not found", domain.NotFound("list_not_found", "no list"), http.StatusNotFound, "list_not_found"},
		{"forbidden", domain.Forbidden("plan_required", "deep needs Pro"), http.StatusForbidden, "plan_required"},
		{"rate limited", domain.RateLimited("daily_call_limit_reached", "100 per day"), http.StatusTooManyRequests, "daily_call_limit_reached"},
		{"lost race", &eventstore.WrongExpectedVersionError{StreamID: "s"}, http.StatusConflict, "conflict"},
		{"unauthenticated", &domain.Error{Kind: domain.ErrUnauthenticated, Code: "invalid_api_key", Message: "bad key"}, http.StatusUnauthorized, "invalid_api_key"},
		{"misdirected", &domain.Error{Kind: httpx.ErrMisdirected, Code: "misdirected_request", Message: "use http://127.0.0.1:8081"}, http.StatusMisdirectedRequest, "misdirected_request"},
		{"too large", httpx.TooLarge(10), http.StatusRequestEntityTooLarge, "body_too_large"},
		{"headers too large", httpx.HeadersTooLarge(10), http.StatusRequestHeaderFieldsTooLarge, "headers_too_large"},
		{"invalid cursor", fmt.Errorf("paging: %w", domain.Invalid("invalid_cursor", "cursor", "not ours")), http.StatusBadRequest, "invalid_cursor"},
		{"max bytes reader", fmt.Errorf("reading body: %w", &http.MaxBytesError{Limit: 10}), http.StatusRequestEntityTooLarge, "body_too_large"},
		{"timeout", fmt.Errorf("query: %w", context.DeadlineExceeded), http.StatusServiceUnavailable, "unavailable"},
		{"unknown", errors.New("pq: password authentication failed for user secret"), http.StatusInternalServerError, "internal_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := httpx.ProblemOf(tc.err)
			if p.Status != tc.status || p.Code != tc.code || p.Message == "" {
				t.Fatalf("ProblemOf = %+v, want %d %s", p, tc.status, tc.code)
			}
			if p.Status >= 500 && p.Message == tc.err.Error() {
				t.Fatalf("a 500 leaks the internal error text")
			}
		})
	}
}
