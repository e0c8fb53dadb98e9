package parcels_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/cql2"
	"github.com/arr-dev/arr/projections/parcels"
)

func collection(t *testing.T, id string) parcels.Collection {
	t.Helper()
	for _, c := range parcels.Collections() {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no collection %s", id)
	return parcels.Collection{}
}

// TestFilterSQL: a filter becomes SQL over the allow-list's columns with
// every literal a bind parameter; what is written in a literal never
// reaches the SQL text.
func TestFilterSQL(t *testing.T) {
	for _, c := range []struct{ name, coll, filter, sql string }{
		{"equality", "vacant", "county = '24510'", "(pl.county = $1::text)"},
		{"like and date", "lis_pendens", "lender LIKE '%BANK%' AND record_date >= DATE('2025-01-01')",
			`((pl.lender LIKE $1::text ESCAPE '\') AND (pl.record_date >= $2::date))`},
		{"literal first", "tax_sale", "5000 < amount_usd", "($1::float8 < round(pl.amount_micros / 1000000.0, 2))"},
		{"property to property", "vacant", "last_seen > first_seen", "(pl.last_seen > pl.first_seen)"},
		{"layer flag", "parcels", "vacant = TRUE AND NOT tax_sale = TRUE",
			"(((p.layers @> ARRAY['vacant']::text[]) = $1::boolean) AND (NOT ((p.layers @> ARRAY['tax_sale']::text[]) = $2::boolean)))"},
		{"in and between", "code_violation", "county IN ('12095', '24510') AND record_count NOT BETWEEN 2 AND 5",
			"((pl.county IN ($1::text, $2::text)) AND (pl.record_count NOT BETWEEN $3::float8 AND $4::float8))"},
		{"date against instant", "vacant", "first_seen < DATE('2019-03-01')", "(pl.first_seen < $1::timestamptz)"},
		{"is null", "vacant", "record_date IS NULL", "(pl.record_date IS NULL)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := cql2.Parse(c.filter, cql2.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			sql, _, err := parcels.FilterSQL(collection(t, c.coll), e)
			if err != nil || sql != c.sql {
				t.Fatalf("FilterSQL(%q) = %q, %v; want %q", c.filter, sql, err, c.sql)
			}
		})
	}
}

func TestFilterSQLHostile(t *testing.T) {
	for _, c := range []struct{ name, coll, filter, code, says string }{
		{"unknown property", "vacant", "owner = 'x'", "unknown_queryable", `"owner" is not a queryable of collection vacant; its queryables are address, amount_usd, apn`},
		{"a column's name", "parcels", "p.geom IS NULL", "unknown_queryable", `"p.geom"`},
		{"quoted SQL as a name", "parcels", `"county = county OR 1" = 'x'`, "unknown_queryable", "is not a queryable"},
		{"lender outside lis_pendens", "vacant", "lender = 'x'", "unknown_queryable", "lender"},
		{"text against a number", "tax_sale", "amount_usd > '5000'", "invalid_filter", "one type"},
		{"timestamp against a date", "vacant", "record_date > TIMESTAMP('2019-01-01T00:00:00Z')", "invalid_filter", "one type"},
		{"like on a number", "tax_sale", "amount_usd LIKE '5%'", "invalid_filter", "LIKE compares text"},
		{"two literals", "vacant", "1 = 1", "invalid_filter", "two literals"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := cql2.Parse(c.filter, cql2.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = parcels.FilterSQL(collection(t, c.coll), e)
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != c.code || !strings.Contains(de.Message, c.says) {
				t.Fatalf("FilterSQL(%q) = %v; want %s saying %q", c.filter, err, c.code, c.says)
			}
		})
	}
	// Injection in literals: the text is a parameter, never SQL.
	for _, lit := range []string{"x'); DROP TABLE rm_parcels.parcels; --", `\'; SELECT pg_sleep(10); --`, "%' OR '1'='1"} {
		f := "address LIKE '" + strings.ReplaceAll(lit, "'", "''") + "' OR apn = '" + strings.ReplaceAll(lit, "'", "''") + "'"
		e, err := cql2.Parse(f, cql2.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		sql, args, err := parcels.FilterSQL(collection(t, "parcels"), e)
		if err != nil || strings.Contains(sql, "DROP") || strings.Contains(sql, "pg_sleep") || strings.Contains(sql, "'1'") || len(args) != 2 || args[0] != lit {
			t.Fatalf("FilterSQL(%q) = %q %v, %v", f, sql, args, err)
		}
	}
}
