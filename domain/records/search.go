package records

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain"
)

// The bounds of the parcel searches beside the bounding box.
const (
	// MaxRadiusM is the largest radius of a nearby search, in metres.
	MaxRadiusM = 5000
	// MinAddressChars and MaxAddressChars bound an address search's text
	// (after normalization for the minimum).
	MinAddressChars = 3
	MaxAddressChars = 200
	// MaxPolygonPositions is the most positions a query polygon holds in
	// all its rings; MaxPolygonRings the most rings (the outer one and
	// holes).
	MaxPolygonPositions = 1000
	MaxPolygonRings     = 20
)

// Near is a nearby search: parcels within RadiusM metres of a point,
// nearest first.
type Near struct {
	Lon, Lat, RadiusM float64
}

// ParseNear reads near=lon,lat and radius_m=N (metres, more than 0 and at
// most MaxRadiusM). Every failure is an ErrInvalid error naming its field.
func ParseNear(near, radius string) (Near, error) {
	if err := domain.Verbatim("near", near); err != nil {
		return Near{}, err
	}
	if err := domain.Verbatim("radius_m", radius); err != nil {
		return Near{}, err
	}
	parts := strings.Split(near, ",")
	if len(parts) != 2 {
		return Near{}, domain.Invalid("near_arity", "near", "near needs exactly two comma-separated numbers lon,lat (WGS 84 degrees), e.g. near=-76.6122,39.2904; got %d", len(parts))
	}
	var v [2]float64
	for i, name := range []string{"longitude", "latitude"} {
		f, ok := ParseDecimal(strings.TrimSpace(parts[i]))
		if !ok {
			return Near{}, domain.Invalid("near_not_a_number", "near", "near's %s is %q, not a decimal number", name, strings.TrimSpace(parts[i]))
		}
		v[i] = f
	}
	if v[0] < -180 || v[0] > 180 {
		return Near{}, domain.Invalid("near_out_of_range", "near", "near's longitude is %g; longitudes must be between -180 and 180", v[0])
	}
	if v[1] < -90 || v[1] > 90 {
		return Near{}, domain.Invalid("near_out_of_range", "near", "near's latitude is %g; latitudes must be between -90 and 90", v[1])
	}
	if strings.TrimSpace(radius) == "" {
		return Near{}, domain.Invalid("radius_required", "radius_m", "radius_m is required with near: the search radius in metres, at most %d", MaxRadiusM)
	}
	r, ok := ParseDecimal(strings.TrimSpace(radius))
	if !ok || r <= 0 || r > MaxRadiusM {
		return Near{}, domain.Invalid("invalid_radius_m", "radius_m", "radius_m must be a number of metres more than 0 and at most %d; got %q", MaxRadiusM, radius)
	}
	return Near{Lon: v[0], Lat: v[1], RadiusM: r}, nil
}

// Envelope is a bounding box that holds every point within n.RadiusM of
// n's point (with a margin), for a spatial index to find candidates the
// exact distance then keeps or drops.
func (n Near) Envelope() BBox {
	const metresPerDegree = 111_320.0
	dLat := n.RadiusM/metresPerDegree*1.01 + 1e-6
	cos := math.Cos(n.Lat * math.Pi / 180)
	dLon := 180.0
	if cos > 1e-6 {
		dLon = min(180, dLat/cos)
	}
	return BBox{West: max(-180, n.Lon-dLon), South: max(-90, n.Lat-dLat), East: min(180, n.Lon+dLon), North: min(90, n.Lat+dLat)}
}

// ParseAddressQuery reads an address search: text of at most
// MaxAddressChars characters holding at least MinAddressChars letters or
// digits. It returns its normalized form (NormalizeAddress: "2041 West
// North" becomes "2041 W NORTH").
func ParseAddressQuery(s string) (string, error) {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxAddressChars {
		return "", domain.Invalid("invalid_address", "address", "address must be text of at most %d characters", MaxAddressChars)
	}
	norm, n := NormalizeAddress(s), 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	if n < MinAddressChars {
		return "", domain.Invalid("address_too_short", "address", "address must hold at least %d letters or digits, like 2041 W North Ave; got %q", MinAddressChars, s)
	}
	return norm, nil
}

// ParseAPNQuery reads an APN search: its normalized form (NormalizeAPN),
// not empty and at most MaxRowTextChars characters.
func ParseAPNQuery(s string) (string, error) {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxRowTextChars {
		return "", domain.Invalid("invalid_apn", "apn", "apn must be text of at most %d characters", MaxRowTextChars)
	}
	norm := NormalizeAPN(s)
	if norm == "" {
		return "", domain.Invalid("invalid_apn", "apn", "apn must hold letters or digits, like 4275-026; got %q", s)
	}
	return norm, nil
}

// Polygon is a query polygon: its GeoJSON, rewritten from the parsed
// coordinates (nothing of the request's text is passed on), and its
// bounding box.
type Polygon struct {
	GeoJSON string
	BBox    BBox
}

// ParsePolygon reads a GeoJSON Polygon geometry ({"type": "Polygon",
// "coordinates": [[[lon, lat], ...], ...]}): rings closed, of at least 4
// positions, at most MaxPolygonRings rings and MaxPolygonPositions
// positions, coordinates in range, its bounding box at most
// MaxBBoxDegrees per side like a bbox search's. Whether the rings are a
// valid polygon (no self-intersection) the database checks. Every failure
// is an ErrInvalid error on field geometry.
func ParsePolygon(raw json.RawMessage) (Polygon, error) {
	bad := func(code, format string, args ...any) (Polygon, error) {
		return Polygon{}, domain.Invalid(code, "geometry", format, args...)
	}
	var g struct {
		Type        string        `json:"type"`
		Coordinates [][][]float64 `json:"coordinates"`
	}
	if len(raw) == 0 || string(raw) == "null" {
		return bad("geometry_required", `geometry is required: a GeoJSON Polygon, like {"type":"Polygon","coordinates":[[[-76.62,39.28],[-76.60,39.28],[-76.60,39.30],[-76.62,39.28]]]}`)
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return bad("invalid_geometry", "geometry must be a GeoJSON Polygon object with type and coordinates (rings of [lon, lat] positions): %v", err)
	}
	if g.Type != "Polygon" {
		return bad("geometry_not_polygon", "geometry's type must be \"Polygon\"; got %q", g.Type)
	}
	if len(g.Coordinates) == 0 || len(g.Coordinates) > MaxPolygonRings {
		return bad("invalid_geometry", "geometry must have 1 to %d rings (the outer ring, then holes); got %d", MaxPolygonRings, len(g.Coordinates))
	}
	var b strings.Builder
	b.WriteString(`{"type":"Polygon","coordinates":[`)
	box := BBox{West: 180, South: 90, East: -180, North: -90}
	total := 0
	for ri, ring := range g.Coordinates {
		if len(ring) < 4 {
			return bad("invalid_geometry", "geometry's ring %d has %d positions; a ring needs at least 4, the last equal to the first", ri, len(ring))
		}
		if total += len(ring); total > MaxPolygonPositions {
			return bad("geometry_too_complex", "geometry has more than %d positions", MaxPolygonPositions)
		}
		if ri > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		var first, last [2]float64
		for pi, pos := range ring {
			if len(pos) < 2 || len(pos) > 3 {
				return bad("invalid_geometry", "geometry's ring %d position %d must be [lon, lat]; got %d numbers", ri, pi, len(pos))
			}
			p := [2]float64{pos[0], pos[1]}
			if p[0] < -180 || p[0] > 180 || p[1] < -90 || p[1] > 90 {
				return bad("geometry_out_of_range", "geometry's ring %d position %d is [%g, %g]; longitudes must be between -180 and 180, latitudes between -90 and 90", ri, pi, p[0], p[1])
			}
			if pi == 0 {
				first = p
			}
			last = p
			box = BBox{West: min(box.West, p[0]), South: min(box.South, p[1]), East: max(box.East, p[0]), North: max(box.North, p[1])}
			if pi > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			b.WriteString(strconv.FormatFloat(p[0], 'g', -1, 64))
			b.WriteByte(',')
			b.WriteString(strconv.FormatFloat(p[1], 'g', -1, 64))
			b.WriteByte(']')
		}
		if first != last {
			return bad("invalid_geometry", "geometry's ring %d is not closed: its last position must equal its first", ri)
		}
		b.WriteByte(']')
	}
	b.WriteString(`]}`)
	if w, h := box.East-box.West, box.North-box.South; w > MaxBBoxDegrees || h > MaxBBoxDegrees {
		return bad("geometry_too_large", "geometry spans %g by %g degrees; at most %g degrees per side, like a bbox", w, h, MaxBBoxDegrees)
	}
	if box.West >= box.East || box.South >= box.North {
		return bad("invalid_geometry", "geometry encloses no area")
	}
	return Polygon{GeoJSON: b.String(), BBox: box}, nil
}

// HouseNumber is the house number a normalized address begins with
// (digits, then at most one letter: "2041", "2041A"), or "".
func HouseNumber(norm string) string {
	first, _, _ := strings.Cut(norm, " ")
	digits := strings.TrimRightFunc(first, unicode.IsLetter)
	if digits == "" || len(first)-len(digits) > 1 || strings.Trim(digits, "0123456789") != "" {
		return ""
	}
	return first
}
