package recordsapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arr-dev/arr/readapi/recordsapi"
)

// TestStatementTimeoutsDocumented: every operation of the service but the
// engine's own (/healthz, /metrics, /openapi.json) documents its statement
// timeout (x-statement-timeout-ms): its route's own, or the default, and
// every route with one of its own is documented.
func TestStatementTimeoutsDocumented(t *testing.T) {
	raw, err := recordsapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Timeout *int64 `json:"x-statement-timeout-ms"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	limits := recordsapi.StatementTimeouts()
	documented := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			route := strings.ToUpper(method) + " " + path
			if path == "/healthz" || path == "/metrics" || path == "/openapi.json" {
				continue
			}
			d, ok := limits[route]
			if !ok {
				d = recordsapi.DefaultStatementTimeout
			}
			if op.Timeout == nil || *op.Timeout != d.Milliseconds() {
				t.Errorf("%s: statement timeout %s, documented %v ms", route, d, op.Timeout)
			}
			if ok {
				documented++
			}
		}
	}
	if documented != len(limits) {
		t.Errorf("%d routes have a statement timeout, %d are documented", len(limits), documented)
	}
}
