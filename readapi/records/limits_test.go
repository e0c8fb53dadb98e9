package records_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arr-dev/arr/readapi/records"
)

// TestStatementTimeoutsDocumented: every route with a statement timeout
// says so in the OpenAPI document (x-statement-timeout-ms), with the same
// limit, and no operation documents one it does not have.
func TestStatementTimeoutsDocumented(t *testing.T) {
	raw, err := records.OpenAPI()
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
	limits := records.StatementTimeouts()
	documented := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			route := strings.ToUpper(method) + " " + path
			d, ok := limits[route]
			switch {
			case ok && (op.Timeout == nil || *op.Timeout != d.Milliseconds()):
				t.Errorf("%s: statement timeout %s, documented %v ms", route, d, op.Timeout)
			case !ok && op.Timeout != nil:
				t.Errorf("%s documents a statement timeout of %d ms it does not have", route, *op.Timeout)
			case ok:
				documented++
			}
		}
	}
	if documented != len(limits) {
		t.Errorf("%d routes have a statement timeout, %d are documented", len(limits), documented)
	}
}
