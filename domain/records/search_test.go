package records

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
)

func TestParseNear(t *testing.T) {
	n, err := ParseNear("-76.651,39.309", "250")
	if err != nil || n != (Near{Lon: -76.651, Lat: 39.309, RadiusM: 250}) {
		t.Fatalf("%+v %v", n, err)
	}
	for _, tc := range []struct{ near, radius, code string }{
		{"-76.6", "10", "near_arity"},
		{"-76.6,39.3,1", "10", "near_arity"},
		{"0x1p-2,39.3", "10", "near_not_a_number"},
		{"Inf,39.3", "10", "near_not_a_number"},
		{"-180.5,39.3", "10", "near_out_of_range"},
		{"-76.6,91", "10", "near_out_of_range"},
		{"-76.6,39.3", "", "radius_required"},
		{"-76.6,39.3", "5000.5", "invalid_radius_m"},
		{"-76.6,39.3", "-1", "invalid_radius_m"},
		{"-76.6,39.3", "1_0", "invalid_radius_m"},
		{"-76.651, 39.309", "250", "whitespace_in_value"},
		{"-76.6,39.3", " 250", "whitespace_in_value"},
	} {
		_, err := ParseNear(tc.near, tc.radius)
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != tc.code {
			t.Errorf("ParseNear(%q, %q) = %v, want %s", tc.near, tc.radius, err, tc.code)
		}
	}
}

// The envelope holds every point within the radius, at the equator, at
// Baltimore's latitude and near a pole.
func TestNearEnvelope(t *testing.T) {
	for _, n := range []Near{{0, 0, 5000}, {-76.65, 39.3, 5000}, {10, 89.99, 5000}, {179.99, 0, 100}} {
		b := n.Envelope()
		const r = 6_371_008.8 // mean Earth radius; the spheroid differs by under 0.7%
		dLat := n.RadiusM / r * 180 / math.Pi
		if b.South > n.Lat-dLat || b.North < math.Min(90, n.Lat+dLat) {
			t.Errorf("%+v: latitudes %v..%v miss ±%v", n, b.South, b.North, dLat)
		}
		if cos := math.Cos(n.Lat * math.Pi / 180); cos > 0.01 {
			dLon := dLat / cos
			if b.West > math.Max(-180, n.Lon-dLon) || b.East < math.Min(180, n.Lon+dLon) {
				t.Errorf("%+v: longitudes %v..%v miss ±%v", n, b.West, b.East, dLon)
			}
		}
	}
}

func TestParseAddressQuery(t *testing.T) {
	if got, err := ParseAddressQuery("2041 West North Avenue"); err != nil || got != "2041 W NORTH AVE" {
		t.Fatalf("%q %v", got, err)
	}
	for _, s := range []string{"", "ab", "-- #", "\xff\xfe12", strings.Repeat("1", MaxAddressChars+1)} {
		if _, err := ParseAddressQuery(s); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("ParseAddressQuery(%q) = %v", s, err)
		}
	}
}

func TestParsePolygon(t *testing.T) {
	p, err := ParsePolygon(json.RawMessage(`{"type":"Polygon","coordinates":[[[-76.62,39.28],[-76.60,39.28,12],[-76.60,39.30],[-76.62,39.28]]],"extra":"ignored"}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.GeoJSON != `{"type":"Polygon","coordinates":[[[-76.62,39.28],[-76.6,39.28],[-76.6,39.3],[-76.62,39.28]]]}` ||
		p.BBox != (BBox{West: -76.62, South: 39.28, East: -76.6, North: 39.3}) {
		t.Fatalf("%+v", p)
	}
	for name, tc := range map[string]struct{ raw, code string }{
		"null":              {`null`, "geometry_required"},
		"a string":          {`"Polygon"`, "invalid_geometry"},
		"a point":           {`{"type":"Point","coordinates":[1,2]}`, "invalid_geometry"},
		"a multipolygon":    {`{"type":"MultiPolygon","coordinates":[]}`, "geometry_not_polygon"},
		"no rings":          {`{"type":"Polygon","coordinates":[]}`, "invalid_geometry"},
		"a short ring":      {`{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}`, "invalid_geometry"},
		"open":              {`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}`, "invalid_geometry"},
		"a 1-number point":  {`{"type":"Polygon","coordinates":[[[0],[1,0],[1,1],[0]]]}`, "invalid_geometry"},
		"a 4-number point":  {`{"type":"Polygon","coordinates":[[[0,0,0,0],[1,0],[1,1],[0,0,0,0]]]}`, "invalid_geometry"},
		"a huge number":     {`{"type":"Polygon","coordinates":[[[1e999,0],[1,0],[1,1],[1e999,0]]]}`, "invalid_geometry"},
		"out of range":      {`{"type":"Polygon","coordinates":[[[0,95],[1,0],[1,1],[0,95]]]}`, "geometry_out_of_range"},
		"too large":         {`{"type":"Polygon","coordinates":[[[0,0],[2.5,0],[2.5,1],[0,0]]]}`, "geometry_too_large"},
		"a line, no area":   {`{"type":"Polygon","coordinates":[[[0,0],[1,0],[0.5,0],[0,0]]]}`, "invalid_geometry"},
		"21 rings":          {`{"type":"Polygon","coordinates":[` + strings.Repeat(`[[0,0],[1,0],[1,1],[0,0]],`, 20) + `[[0,0],[1,0],[1,1],[0,0]]]}`, "invalid_geometry"},
		"nested too deeply": {`{"type":"Polygon","coordinates":[[[[0,0]]]]}`, "invalid_geometry"},
	} {
		_, err := ParsePolygon(json.RawMessage(tc.raw))
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != tc.code || de.Field != "geometry" {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
}

func TestHouseNumber(t *testing.T) {
	for in, want := range map[string]string{"2041 W NORTH": "2041", "2041A W NORTH": "2041A", "W NORTH AVE": "", "2041AB W": "", "A1 ST": "", "2041": "2041", "": ""} {
		if got := HouseNumber(in); got != want {
			t.Errorf("HouseNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParsePolygon: any body either is refused on field geometry or gives
// a polygon whose rewritten GeoJSON parses back to itself, within the
// bounds.
func FuzzParsePolygon(f *testing.F) {
	for _, s := range []string{
		`{"type":"Polygon","coordinates":[[[-76.62,39.28],[-76.60,39.28],[-76.60,39.30],[-76.62,39.28]]]}`,
		`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]],[[0.2,0.2],[0.3,0.2],[0.3,0.3],[0.2,0.2]]]}`,
		`{"type":"Polygon","coordinates":[[[1e308,0],[1,0],[1,1],[1e308,0]]]}`, `{"type":"Polygon"}`, `[]`, `{"coordinates":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ParsePolygon(json.RawMessage(raw))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Field != "geometry" {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		again, err := ParsePolygon(json.RawMessage(p.GeoJSON))
		if err != nil || again != p {
			t.Fatalf("%s rewritten as %s, which parses to %+v, %v", raw, p.GeoJSON, again, err)
		}
		if p.BBox.East-p.BBox.West > MaxBBoxDegrees || p.BBox.North-p.BBox.South > MaxBBoxDegrees {
			t.Fatalf("%s: bbox %+v", raw, p.BBox)
		}
	})
}
