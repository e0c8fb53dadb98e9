package ratelimit_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/ratelimit"
	"github.com/arr-dev/arr/readapi/recordsapi"
)

// TestLimitsAreDocumented: each service's OpenAPI document states every
// plan's limit as the catalog has it, the headers and the 429.
func TestLimitsAreDocumented(t *testing.T) {
	tests := []struct {
		name    string
		openapi func() ([]byte, error)
		limit   func(account.Limits) int64
		extra   []string
	}{
		{"gateway", gateway.OpenAPI, func(l account.Limits) int64 { return l.GatewayRequestsPerDay }, []string{"per account", "UTC day", "daily_request_limit_reached"}},
		{"answer", answerapi.OpenAPI, func(l account.Limits) int64 { return l.AnswerCallsPerDay }, []string{"per API key", "UTC day", "daily_call_limit_reached"}},
		{"records", recordsapi.OpenAPI, func(l account.Limits) int64 { return l.RecordsRequestsPerHour }, []string{"per API key (not per IP)", "clock hour",
			"hourly_request_limit_reached", "ip_rate_limit_reached", fmt.Sprintf("%d requests per client IP address per clock hour", ratelimit.DefaultPublicPerHour), "/openapi.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := tc.openapi()
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Info struct {
					Description string `json:"description"`
				} `json:"info"`
				Components struct {
					Headers   map[string]any `json:"headers"`
					Responses map[string]any `json:"responses"`
				} `json:"components"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			d := doc.Info.Description
			for _, o := range account.Catalog() {
				if want := fmt.Sprintf("%s %d", o.Title, tc.limit(o.Limits)); !strings.Contains(d, want) {
					t.Errorf("the description does not state %q", want)
				}
			}
			// The rule of Served: refused requests are given back.
			rule := []string{"Only served requests count", "any 4xx but 429", "given back", "a 5xx stays counted", "a 401 (no valid key) is never counted"}
			for _, want := range append(append(tc.extra, rule...), "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Unix time, in seconds", "Retry-After", "429") {
				if !strings.Contains(d, want) {
					t.Errorf("the description does not mention %q", want)
				}
			}
			for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"} {
				if doc.Components.Headers[h] == nil {
					t.Errorf("components.headers lacks %s", h)
				}
			}
			if doc.Components.Responses["RateLimited"] == nil {
				t.Errorf("components.responses lacks RateLimited")
			}
		})
	}
}
