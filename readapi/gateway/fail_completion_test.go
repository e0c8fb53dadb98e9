package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
)

// TestFailCompletion: how a failed completion is answered. An outcome the
// audit chain cannot tell gets no answer at all (the connection is
// aborted); the rest get a status and the OpenAI error shape, or the
// upstream's own refusal.
func TestFailCompletion(t *testing.T) {
	gin.SetMode(gin.TestMode)
	cases := []struct {
		name   string
		err    error
		status int
		code   string
		raw    string
	}{
		{name: "no upstream answered", err: &complete.UpstreamFailure{Attempts: []string{"m: HTTP 500"}}, status: http.StatusBadGateway, code: "upstream_unavailable"},
		{name: "the upstream refused the request", err: &complete.Refused{Status: 400, Body: []byte(`{"error":{"message":"bad"}}`), Err: errors.New("upstream m: HTTP 400")},
			status: 400, raw: `{"error":{"message":"bad"}}`},
		{name: "not recorded", err: fmt.Errorf("recording completion: not recorded: %w", domain.ErrUnavailable), status: http.StatusServiceUnavailable, code: "unavailable"},
		{name: "outcome unknown", err: fmt.Errorf("recording completion in the audit chain: %w", commands.ErrOutcomeUnknown)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			c.Request = httptest.NewRequest(http.MethodPost, completionsPath, nil)
			var aborted any
			func() {
				defer func() { aborted = recover() }()
				failCompletion(c, tc.err)
			}()
			if tc.status == 0 {
				if aborted != http.ErrAbortHandler || w.Body.Len() != 0 {
					t.Fatalf("recovered %v, wrote %q; want the connection aborted without an answer", aborted, w.Body.String())
				}
				return
			}
			if aborted != nil || w.Code != tc.status {
				t.Fatalf("status %d (panic %v), want %d: %s", w.Code, aborted, tc.status, w.Body.String())
			}
			if tc.raw != "" {
				if w.Body.String() != tc.raw {
					t.Fatalf("body %s, want the upstream's %s", w.Body.String(), tc.raw)
				}
				return
			}
			var body struct {
				Error struct{ Code string } `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != tc.code {
				t.Fatalf("body %s, want code %s", w.Body.String(), tc.code)
			}
		})
	}
}
