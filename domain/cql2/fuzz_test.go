package cql2_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/cql2"
)

// FuzzParse: any input parses, or fails with a validation error; never a
// panic, and what parses formats into text that parses to the same.
// `go test ./domain/cql2 -fuzz FuzzParse` explores; the seeds run in the
// normal suite.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"county = '24510'", "a = 1 OR b = 2 AND NOT c <> 3", "(((a = 1)))", "a LIKE '%x_' AND b NOT IN (1, 2)",
		"d BETWEEN DATE('2019-01-01') AND DATE('2019-12-31')", "t > TIMESTAMP('2019-10-01T00:00:00Z')",
		"\"q\"\"x\" IS NOT NULL", "'; DROP TABLE x; --", "a = 1e", "NOT NOT TRUE", "x = -.5", "a = 'it''s'",
		`a LIKE 'x\'`, `a LIKE 'x\\'`, "t = TIMESTAMP('9999-12-31T23:00:00-05:00')", "d = DATE('0000-01-01')",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := cql2.Parse(s, cql2.DefaultLimits())
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("Parse(%q): %v is not a validation error", s, err)
			}
			return
		}
		text := cql2.Format(e)
		again, err := cql2.Parse(text, cql2.Limits{MaxChars: 1 << 20, MaxDepth: 1 << 10, MaxNodes: 1 << 16})
		if err != nil {
			t.Fatalf("Parse(%q) formats as %q, which does not parse: %v", s, text, err)
		}
		if cql2.Format(again) != text {
			t.Fatalf("Parse(%q): %q formats again as %q", s, text, cql2.Format(again))
		}
	})
}
