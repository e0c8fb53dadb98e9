package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// gdal runs a GDAL command-line tool (ogrinfo, ogr2ogr; scripts/test.sh
// installs Debian's gdal-bin) and returns its output; a failure fails the
// test with what it printed.
func gdal(t testing.TB, tool string, args ...string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s is not installed: run scripts/test.sh, or `source scripts/lib.sh; ensure_gdal`", tool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	// GDAL's own debug lines (the URLs it fetches) go to stderr.
	cmd.Env = append(os.Environ(), "CPL_DEBUG=ON", "GDAL_HTTP_TIMEOUT=60")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", tool, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

func countRows(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

var featureCountRE = regexp.MustCompile(`(?m)^Feature Count: (\d+)$`)

// TestOGCFeatures reads the records service's OGC API – Features over the
// shipped data with GDAL's OAPIF driver (every collection, a CQL2-filtered
// query evaluated by the server, ogr2ogr to GeoJSON), and sends it what a
// hostile client would.
func TestOGCFeatures(t *testing.T) {
	e := newEnv(t)
	// GDAL pages and re-reads: room for it under the per-IP limit.
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "ARR_PUBLIC_RATE_LIMIT=100000")
	e.up()
	pool, _ := openStore(t, e.dbURL)
	// The demo data is ~70,000 rows; on a loaded 2-core machine its
	// projection takes longer than the 90 s other tests allow.
	waitCaughtUp(t, pool, 3*time.Minute)
	ogc := e.records + "/api/v1/ogc"
	src := "OAPIF:" + ogc
	collections := []string{"parcels", "vacant", "tax_sale", "tax_delinquent", "code_violation", "foreclosure_auction", "lis_pendens"}

	t.Run("ogrinfo lists every collection with its feature count", func(t *testing.T) {
		out, _ := gdal(t, "ogrinfo", "-ro", "-q", src)
		for i, id := range collections {
			if !strings.Contains(out, fmt.Sprintf("%d: %s (title:", i+1, id)) {
				t.Fatalf("ogrinfo does not list collection %d %s:\n%s", i+1, id, out)
			}
		}
		for _, id := range collections {
			want := countRows(t, pool, `SELECT count(*) FROM rm_parcels.parcel_layers WHERE named AND layer = $1`, id)
			if id == "parcels" {
				want = countRows(t, pool, `SELECT count(*) FROM rm_parcels.parcels`)
			}
			out, _ := gdal(t, "ogrinfo", "-ro", "-so", "-oo", "PAGE_SIZE=1000", src, id)
			m := featureCountRE.FindStringSubmatch(out)
			if m == nil || m[1] != fmt.Sprint(want) || want == 0 {
				t.Fatalf("%s: ogrinfo says %v features, the read model holds %d:\n%s", id, m, want, out)
			}
		}
	})

	t.Run("a CQL2 filter GDAL writes is evaluated by the server", func(t *testing.T) {
		out, debug := gdal(t, "ogrinfo", "-ro", "-so", "-oo", "PAGE_SIZE=1000", "-where", "county = '24510' AND address LIKE '%NORTH AVE'", src, "vacant")
		want := countRows(t, pool, `SELECT count(*) FROM rm_parcels.parcel_layers WHERE named AND layer = 'vacant' AND county = '24510' AND address LIKE '%NORTH AVE'`)
		m := featureCountRE.FindStringSubmatch(out)
		if m == nil || m[1] != fmt.Sprint(want) || want == 0 {
			t.Fatalf("filtered: ogrinfo says %v, the read model %d:\n%s", m, want, out)
		}
		if !strings.Contains(debug, "filter=") || !strings.Contains(debug, "filter-lang=cql-text") {
			t.Fatalf("GDAL did not send the filter to the server:\n%s", debug)
		}
	})

	t.Run("ogr2ogr copies a filtered layer to GeoJSON", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "tax_sale.geojson")
		gdal(t, "ogr2ogr", "-f", "GeoJSON", "-oo", "PAGE_SIZE=1000", "-where", "amount_usd > 5000", dst, src, "tax_sale")
		raw, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		var fc struct {
			Features []struct {
				Properties map[string]any `json:"properties"`
			} `json:"features"`
		}
		if err := json.Unmarshal(raw, &fc); err != nil {
			t.Fatal(err)
		}
		want := countRows(t, pool, `SELECT count(*) FROM rm_parcels.parcel_layers WHERE named AND layer = 'tax_sale' AND amount_micros > 5000000000`)
		if len(fc.Features) != want || want == 0 {
			t.Fatalf("ogr2ogr wrote %d features, the read model has %d", len(fc.Features), want)
		}
		for _, f := range fc.Features {
			if n, _ := f.Properties["amount_usd"].(float64); n <= 5000 {
				t.Fatalf("a feature with amount_usd %v", f.Properties["amount_usd"])
			}
		}
		if phoneRE.Match(raw) || emailRE.Match(raw) {
			t.Fatalf("the export carries contact data: %s", phoneRE.Find(raw))
		}
	})

	t.Run("pages link forwards and back", func(t *testing.T) {
		type page struct {
			Features []struct {
				ID string `json:"id"`
			} `json:"features"`
			Links []struct{ Href, Rel string } `json:"links"`
		}
		link := func(p page, rel string) string {
			for _, l := range p.Links {
				if l.Rel == rel {
					return l.Href
				}
			}
			return ""
		}
		ids := func(p page) []string {
			var out []string
			for _, f := range p.Features {
				out = append(out, f.ID)
			}
			return out
		}
		var p1, p2, p3, back page
		getJSON(t, ogc+"/collections/vacant/items?limit=7&county=24510", nil, 200, &p1)
		if link(p1, "prev") != "" || link(p1, "next") == "" || len(p1.Features) != 7 {
			t.Fatalf("first page: %d features, links %+v", len(p1.Features), p1.Links)
		}
		getJSON(t, link(p1, "next"), nil, 200, &p2)
		getJSON(t, link(p2, "next"), nil, 200, &p3)
		getJSON(t, link(p3, "prev"), nil, 200, &back)
		if !slices.Equal(ids(back), ids(p2)) || slices.Equal(ids(p2), ids(p3)) {
			t.Fatalf("page 2 %v, back from page 3 %v", ids(p2), ids(back))
		}
		// One feature by its id.
		var f struct {
			ID         string               `json:"id"`
			Properties struct{ APN string } `json:"properties"`
		}
		getJSON(t, ogc+"/collections/vacant/items/"+url.PathEscape(p2.Features[0].ID), nil, 200, &f)
		if f.ID != p2.Features[0].ID {
			t.Fatalf("feature %s answers %s", p2.Features[0].ID, f.ID)
		}
		getJSON(t, ogc+"/collections/vacant/items/24510-NO_SUCH~2FAPN", nil, 404, nil)
		// A cursor of another filter is refused.
		next := link(p1, "next")
		getJSON(t, strings.Replace(next, "county=24510", "county=12095", 1), nil, 400, nil)
	})

	t.Run("hostile filters are refused with a message, never run", func(t *testing.T) {
		before := countRows(t, pool, `SELECT count(*) FROM rm_parcels.parcels`)
		for _, c := range []struct{ name, query, code, says string }{
			{"statement injection", "filter=" + url.QueryEscape("county = '24510'; DROP TABLE rm_parcels.parcels; --"), "invalid_filter", "character 17"},
			{"unknown property", "filter=" + url.QueryEscape("owner_phone = '555'"), "unknown_queryable", "address, amount_usd, apn"},
			{"column expression", "filter=" + url.QueryEscape("pl.county = '24510'"), "unknown_queryable", "pl.county"},
			{"deep nesting", "filter=" + url.QueryEscape(strings.Repeat("(", 100)+"county = '1'"+strings.Repeat(")", 100)), "filter_too_deep", "16 levels"},
			{"huge input", "filter=" + url.QueryEscape("address = '"+strings.Repeat("A", 5000)+"'"), "filter_too_long", "4096"},
			{"bad date", "filter=" + url.QueryEscape("record_date = DATE('2019-02-30')"), "invalid_filter", "not a calendar date"},
			{"date against text", "filter=" + url.QueryEscape("record_date = '2019-02-01'"), "invalid_filter", "one type"},
			{"bad datetime", "datetime=yesterday", "invalid_datetime", "RFC 3339"},
			{"unknown filter-lang", "filter=a%3D1&filter-lang=sql", "invalid_filter_lang", "cql2-text"},
			{"unknown parameter", "owner=x", "invalid_query_parameter", "owner"},
		} {
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			getJSON(t, ogc+"/collections/vacant/items?"+c.query, nil, 400, &body)
			if body.Error.Code != c.code || !strings.Contains(body.Error.Message, c.says) {
				t.Errorf("%s: %s %q, want %s saying %q", c.name, body.Error.Code, body.Error.Message, c.code, c.says)
			}
		}
		// A quote inside a literal is data, not SQL.
		var fc struct {
			Features []any `json:"features"`
		}
		getJSON(t, ogc+"/collections/parcels/items?filter="+url.QueryEscape("address = 'X'' OR ''1''=''1'"), nil, 200, &fc)
		if len(fc.Features) != 0 {
			t.Fatalf("a quoted OR matched %d parcels", len(fc.Features))
		}
		getJSON(t, ogc+"/collections/parcels/items?datetime=2019-10-01", nil, 400, nil)
		if after := countRows(t, pool, `SELECT count(*) FROM rm_parcels.parcels`); after != before {
			t.Fatalf("parcels %d before, %d after", before, after)
		}
	})

	t.Run("links ignore a forged Host, and edge inputs are 400 or 404, never 500", func(t *testing.T) {
		for _, path := range []string{"", "/collections", "/collections/vacant", "/collections/vacant/items?limit=2"} {
			body := getJSON(t, ogc+path, map[string]string{"Host": "evil.example", "X-Forwarded-Host": "evil.example"}, 200, nil)
			if strings.Contains(string(body), "evil") || !strings.Contains(string(body), `"`+ogc) {
				t.Fatalf("%s with Host: evil.example: links not on %s: %s", path, ogc, body)
			}
		}
		for _, c := range []struct{ name, query, code string }{
			{"like ending in the escape", "filter=" + url.QueryEscape(`address LIKE 'abc\'`), "invalid_filter"},
			{"timestamp of year 0", "filter=" + url.QueryEscape("first_seen > TIMESTAMP('0000-12-31T23:00:00-05:00')"), "invalid_filter"},
			{"date of year 0", "filter=" + url.QueryEscape("record_date > DATE('0000-01-01')"), "invalid_filter"},
			{"datetime of year 10000 in UTC", "datetime=" + url.QueryEscape("9999-12-31T23:00:00-05:00"), "invalid_datetime"},
			{"bbox heights reversed", "bbox=-76.7,39.2,10,-76.5,39.3,-10", "bbox_order"},
		} {
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			getJSON(t, ogc+"/collections/vacant/items?"+c.query, nil, 400, &body)
			if body.Error.Code != c.code {
				t.Errorf("%s: %s %q, want %s", c.name, body.Error.Code, body.Error.Message, c.code)
			}
		}
		for _, id := range []string{"24510-~00", "24510-A~00B", "24510-~FF", "24510-~C3~28"} {
			getJSON(t, ogc+"/collections/parcels/items/"+id, nil, 404, nil)
		}
		// A bbox across the antimeridian, and a 3D one, are read.
		getJSON(t, ogc+"/collections/parcels/items?bbox=179.5,51,-179.5,52", nil, 200, nil)
		var flat, deep struct {
			NumberReturned int `json:"numberReturned"`
		}
		getJSON(t, ogc+"/collections/vacant/items?limit=1000&bbox=-76.7,39.2,-76.5,39.4", nil, 200, &flat)
		getJSON(t, ogc+"/collections/vacant/items?limit=1000&bbox=-76.7,39.2,-5,-76.5,39.4,5", nil, 200, &deep)
		if flat.NumberReturned == 0 || deep.NumberReturned != flat.NumberReturned {
			t.Fatalf("bbox in 2D: %d features, in 3D: %d", flat.NumberReturned, deep.NumberReturned)
		}
		// amount_usd = the rendered amount of a feature matches it.
		var one struct {
			Features []struct {
				ID         string `json:"id"`
				Properties struct {
					Amount *json.Number `json:"amount_usd"`
				} `json:"properties"`
			} `json:"features"`
		}
		getJSON(t, ogc+"/collections/tax_sale/items?limit=1&filter="+url.QueryEscape("amount_usd IS NOT NULL"), nil, 200, &one)
		if len(one.Features) != 1 || one.Features[0].Properties.Amount == nil {
			t.Fatalf("no tax sale with an amount: %+v", one)
		}
		amount := one.Features[0].Properties.Amount.String()
		var same struct {
			Features []struct {
				ID string `json:"id"`
			} `json:"features"`
		}
		getJSON(t, ogc+"/collections/tax_sale/items?limit=1000&filter="+url.QueryEscape("amount_usd = "+amount), nil, 200, &same)
		want := countRows(t, pool, `SELECT least(count(*), 1000) FROM rm_parcels.parcel_layers WHERE named AND layer = 'tax_sale' AND round(amount_micros / 1000000.0, 2) = $1::numeric`, amount)
		if len(same.Features) != want || !slices.ContainsFunc(same.Features, func(f struct {
			ID string `json:"id"`
		}) bool {
			return f.ID == one.Features[0].ID
		}) {
			t.Fatalf("amount_usd = %s: %d features (without %s?), %d render as %s", amount, len(same.Features), one.Features[0].ID, want, amount)
		}
	})

	t.Run("datetime selects a layer's records by their date", func(t *testing.T) {
		var fc struct {
			NumberReturned int `json:"numberReturned"`
		}
		getJSON(t, ogc+"/collections/lis_pendens/items?limit=1000&datetime=2025-11-01/2025-11-30", nil, 200, &fc)
		want := countRows(t, pool, `SELECT least(count(*), 1000) FROM rm_parcels.parcel_layers WHERE named AND layer = 'lis_pendens' AND coalesce(record_date, source_date) BETWEEN '2025-11-01' AND '2025-11-30'`)
		if fc.NumberReturned != want || want == 0 {
			t.Fatalf("datetime November 2025: %d records, the read model %d", fc.NumberReturned, want)
		}
		getJSON(t, ogc+"/collections/lis_pendens/items?limit=1000&datetime=../2025-01-31", nil, 200, &fc)
		want = countRows(t, pool, `SELECT least(count(*), 1000) FROM rm_parcels.parcel_layers WHERE named AND layer = 'lis_pendens' AND coalesce(record_date, source_date) <= '2025-01-31'`)
		if fc.NumberReturned != want {
			t.Fatalf("datetime ../2025-01-31: %d records, the read model %d", fc.NumberReturned, want)
		}
	})
}
