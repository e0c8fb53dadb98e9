package recordsapi

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/recordsapi/cursor"
)

// FuzzParams: the records service's query parameters (bbox, layers,
// limit, offset, cursor, signals, include_contact, county, weights, as_of)
// and the signals path id are refused with a 4xx, or parse into values
// within their rules whose text passes the text rule (so nothing that
// reaches a query can make PostgreSQL fail).
func FuzzParams(f *testing.F) {
	codec, err := cursor.New(bytes.Repeat([]byte{7}, cursor.MinKeyBytes))
	if err != nil {
		f.Fatal(err)
	}
	good := codec.Encode(cursor.Query{BBox: records.BBox{West: -76.66, South: 39.30, East: -76.64, North: 39.32}, Layers: []string{"vacant"}},
		parcels.ParcelKey{County: "24510", APN: "0001"})
	for _, s := range [][2]string{
		{"bbox=-76.66,39.30,-76.64,39.32&layers=vacant&cursor=" + good, "lead"},
		{"bbox=-76.66,39.30,-76.64,39.32&layers=vacant&limit=10", "123"},
		{"bbox=-76.66,39.30,-76.64,39.32&cursor=AAAA", "24510-0001"},
		{"county=%00&signals=1&include_contact=1", "%00"},
		{"limit=-1&offset=99999999999999999999", "\x00"},
		{"weights=v9&as_of=2026-13-01", "\xff"},
		{"bbox=0,0,1,1&layers=vacant,,tax_sale&cursor=" + strings.Repeat("A", 200), strings.Repeat("9", 3000)},
	} {
		f.Add(s[0], s[1])
	}
	gin.SetMode(gin.ReleaseMode)
	s := &server{}
	f.Fuzz(func(t *testing.T, raw, id string) {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest(http.MethodGet, "/api/v1/parcels", nil)
		c.Request.URL.RawQuery = raw
		refused := func(what string, err error) bool {
			t.Helper()
			if err == nil {
				return false
			}
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("%s refused with %v, not a validation error", what, err)
			}
			if st := httpx.ProblemOf(err).Status; st != http.StatusBadRequest {
				t.Fatalf("%s refused with status %d", what, st)
			}
			return true
		}
		if b, err := records.ParseBBox(c.Query("bbox")); !refused("bbox", err) {
			if ls, err := records.ParseLayers(c.Query("layers")); !refused("layers", err) {
				keys := make([]string, len(ls))
				for i, l := range ls {
					keys[i] = string(l)
				}
				if k, err := codec.Decode(cursor.Query{BBox: b, Layers: keys}, c.Query("cursor")); !refused("cursor", err) && k != nil {
					if !text.Valid(k.County) || !text.Valid(k.APN) {
						t.Fatalf("cursor %q decoded to text that fails the text rule: %+v", c.Query("cursor"), k)
					}
				}
			}
		}
		if limit, offset, err := page(c); !refused("limit/offset", err) && (limit < 1 || limit > maxLimit || offset < 0 || offset > maxOffset) {
			t.Fatalf("page accepted limit %d offset %d", limit, offset)
		}
		_, err := flag(c, "signals")
		refused("signals", err)
		_, err = flag(c, "include_contact")
		refused("include_contact", err)
		if county, err := countyParam(c); !refused("county", err) && county != "" && (len(county) != 5 || strings.Trim(county, "0123456789") != "") {
			t.Fatalf("county %q accepted", county)
		}
		_, _, err = s.scoreParams(c)
		refused("weights/as_of", err)
		refused("id", text.Check("id", strings.TrimSpace(id), records.MaxRowTextChars))
	})
}

// FuzzParcelSearch: the searches of GET /api/v1/parcels (bbox, near with
// radius_m, address, apn with county) are refused with a validation
// error, or parse into one search within its rules: a nearby search's
// point in range and radius within (0, 5000], an address's normalized
// text of valid UTF-8 holding letters or digits, an APN of letters and
// digits only.
func FuzzParcelSearch(f *testing.F) {
	for _, s := range []string{
		"near=-76.651,39.309&radius_m=300", "address=2041%20W%20North", "apn=0001-003&county=24510",
		"near=NaN,1&radius_m=1e400", "address=%ff%fe", "apn=%00", "near=1,2&radius_m=10&bbox=0,0,1,1",
		"address=" + strings.Repeat("%23", 300), "radius_m=5&apn=1", "near=-180,90&radius_m=5000",
	} {
		f.Add(s)
	}
	gin.SetMode(gin.ReleaseMode)
	f.Fuzz(func(t *testing.T, raw string) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodGet, "/api/v1/parcels", nil)
		c.Request.URL.RawQuery = raw
		ps, err := parcelSearchOf(c)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) || httpx.ProblemOf(err).Status != http.StatusBadRequest {
				t.Fatalf("%q refused with %v", raw, err)
			}
			return
		}
		switch ps.kind {
		case "near":
			n := ps.near
			if n.Lon < -180 || n.Lon > 180 || n.Lat < -90 || n.Lat > 90 || n.RadiusM <= 0 || n.RadiusM > records.MaxRadiusM {
				t.Fatalf("%q: near %+v", raw, n)
			}
		case "address":
			if !text.Valid(ps.address) || strings.TrimSpace(ps.address) == "" {
				t.Fatalf("%q: address %q", raw, ps.address)
			}
		case "apn":
			if ps.apn == "" || strings.IndexFunc(ps.apn, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
				t.Fatalf("%q: apn %q", raw, ps.apn)
			}
		case "bbox":
		default:
			t.Fatalf("%q: kind %q", raw, ps.kind)
		}
		if ps.limit < 1 || ps.limit > maxLimit {
			t.Fatalf("%q: limit %d", raw, ps.limit)
		}
	})
}
