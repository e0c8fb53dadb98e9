package cql2_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/cql2"
)

func TestParse(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"equality", "county = '24510'", `"county" = '24510'`},
		{"precedence", "a = 1 OR b = 2 AND c = 3", `("a" = 1) OR (("b" = 2) AND ("c" = 3))`},
		{"parentheses", "(a = 1 OR b = 2) AND c <> 3", `(("a" = 1) OR ("b" = 2)) AND ("c" <> 3)`},
		{"not", "NOT a >= -1.5e2", `NOT ("a" >= -1.5e2)`},
		{"keywords any case", "a like 'x%' and b is not null", `("a" LIKE 'x%') AND ("b" IS NOT NULL)`},
		{"not like", "address NOT LIKE '%AVE'", `"address" NOT LIKE '%AVE'`},
		{"between", "n BETWEEN 1 AND 5", `"n" BETWEEN 1 AND 5`},
		{"not between", "n NOT BETWEEN 1 AND 5", `"n" NOT BETWEEN 1 AND 5`},
		{"in", "county IN ('24510', '12095')", `"county" IN ('24510', '12095')`},
		{"not in", "county NOT IN ('24510')", `"county" NOT IN ('24510')`},
		{"dates", "d >= DATE('2019-10-01') AND t < TIMESTAMP('2019-10-01T12:00:00Z')", `("d" >= DATE('2019-10-01')) AND ("t" < TIMESTAMP('2019-10-01T12:00:00Z'))`},
		{"boolean", "vacant = TRUE AND NOT tax_sale = false", `("vacant" = TRUE) AND (NOT ("tax_sale" = FALSE))`},
		{"boolean alone", "TRUE", `TRUE`},
		{"property to property", "last_seen > first_seen", `"last_seen" > "first_seen"`},
		{"quoted names and quotes", `"my prop" = 'O''Brien'`, `"my prop" = 'O''Brien'`},
		{"is null", "lender IS NULL", `"lender" IS NULL`},
		{"like with an escaped backslash at the end", `address LIKE 'abc\\'`, `"address" LIKE 'abc\\'`},
		{"like with an escaped wildcard", `address LIKE '100\%'`, `"address" LIKE '100\%'`},
		{"the last instant of 9999", "t < TIMESTAMP('9999-12-31T23:59:59Z')", `"t" < TIMESTAMP('9999-12-31T23:59:59Z')`},
		{"the first day of year 1", "d >= DATE('0001-01-01')", `"d" >= DATE('0001-01-01')`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := cql2.Parse(c.in, cql2.DefaultLimits())
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.in, err)
			}
			if got := cql2.Format(e); got != c.want {
				t.Fatalf("Parse(%q) = %s, want %s", c.in, got, c.want)
			}
			again, err := cql2.Parse(cql2.Format(e), cql2.DefaultLimits())
			if err != nil || !reflect.DeepEqual(strip(again), strip(e)) {
				t.Fatalf("Format does not parse back to the same expression: %v", err)
			}
		})
	}
}

// strip drops the positions of properties, which Format does not keep.
func strip(e cql2.Expr) string { return cql2.Format(e) }

func TestParseRefuses(t *testing.T) {
	deep := strings.Repeat("(", 40) + "a = 1" + strings.Repeat(")", 40)
	nots := strings.Repeat("NOT ", 40) + "a = 1"
	wide := "a IN (" + strings.Repeat("1,", 400) + "1)"
	for _, c := range []struct{ name, in, code, says string }{
		{"empty", "  ", "invalid_filter", "empty"},
		{"unclosed string", "a = 'x", "invalid_filter", "character 5"},
		{"unclosed paren", "(a = 1", "invalid_filter", "expected ) to close the ( at character 1"},
		{"sql injection", "county = '24510'; DROP TABLE parcels; --", "invalid_filter", "character 17"},
		{"comment", "a = 1 -- x", "invalid_filter", "character 7"},
		{"bang equals", "a != 1", "invalid_filter", "write <>"},
		{"unknown function", "S_INTERSECTS(geometry, POINT(1 2))", "invalid_filter", "not a function"},
		{"keyword as operand", "a = AND", "invalid_filter", "keyword AND"},
		{"bad date", "d = DATE('2019-13-01')", "invalid_filter", "not a calendar date"},
		{"bad timestamp", "d = TIMESTAMP('yesterday')", "invalid_filter", "RFC 3339"},
		{"like without string", "a LIKE 3", "invalid_filter", "quoted pattern"},
		{"like ending in the escape", `address LIKE 'abc\'`, "invalid_filter", "ends with the escape character"},
		{"like ending in an odd run of escapes", `address LIKE 'abc\\\'`, "invalid_filter", "ends with the escape character"},
		{"date of year 0", "d = DATE('0000-01-01')", "invalid_filter", "years 0001 to 9999"},
		{"timestamp of year 0", "t = TIMESTAMP('0000-12-31T23:00:00-05:00')", "invalid_filter", "years 0001 to 9999"},
		{"timestamp before year 1 in UTC", "t = TIMESTAMP('0001-01-01T00:30:00+01:00')", "invalid_filter", "years 0001 to 9999"},
		{"timestamp after 9999 in UTC", "t = TIMESTAMP('9999-12-31T23:00:00-05:00')", "invalid_filter", "years 0001 to 9999"},
		{"trailing", "a = 1 b", "invalid_filter", "expected AND, OR"},
		{"missing operand", "a =", "invalid_filter", "the end of the filter"},
		{"invalid utf-8", "a = '\xff'", "invalid_filter", "UTF-8"},
		{"too deep", deep, "filter_too_deep", "16 levels"},
		{"too many nots", nots, "filter_too_deep", "16 levels"},
		{"too many nodes", wide, "filter_too_complex", "256"},
		{"too long", "a = '" + strings.Repeat("x", 5000) + "'", "filter_too_long", "4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cql2.Parse(c.in, cql2.DefaultLimits())
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, want a validation error", c.in, err)
			}
			if de.Code != c.code || de.Field != "filter" || !strings.Contains(de.Message, c.says) {
				t.Fatalf("Parse(%q): %s %q, want code %s saying %q", c.in, de.Code, de.Message, c.code, c.says)
			}
		})
	}
}
