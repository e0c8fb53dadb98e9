package records

import (
	"math"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/domain"
)

// MaxBBoxDegrees is the most a bounding box may span per side.
const MaxBBoxDegrees = 2.0

// BBox is a WGS 84 bounding box: West < East, South < North, each side at
// most MaxBBoxDegrees.
type BBox struct {
	West, South, East, North float64
}

// ParseBBox reads "west,south,east,north" and checks it: four decimal
// numbers (ParseDecimal), longitudes in [-180, 180], latitudes in [-90, 90], west < east,
// south < north, at most MaxBBoxDegrees per side. Every failure is an
// ErrInvalid error on field bbox whose message says what is wrong.
func ParseBBox(s string) (BBox, error) {
	bad := func(code, format string, args ...any) (BBox, error) {
		return BBox{}, domain.Invalid(code, "bbox", format, args...)
	}
	if strings.TrimSpace(s) == "" {
		return bad("bbox_required", "bbox is required: west,south,east,north in degrees (WGS 84), e.g. bbox=-76.62,39.28,-76.60,39.30")
	}
	if err := domain.Verbatim("bbox", s); err != nil {
		return BBox{}, err
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return bad("bbox_arity", "bbox needs exactly four comma-separated numbers west,south,east,north; got %d", len(parts))
	}
	var v [4]float64
	names := [4]string{"west", "south", "east", "north"}
	for i, p := range parts {
		f, ok := ParseDecimal(strings.TrimSpace(p))
		if !ok {
			return bad("bbox_not_a_number", "bbox %s is %q, not a decimal number (digits, an optional sign, point and exponent, like -76.62 or 39.3)", names[i], strings.TrimSpace(p))
		}
		v[i] = f
	}
	b := BBox{West: v[0], South: v[1], East: v[2], North: v[3]}
	for i, lon := range []float64{b.West, b.East} {
		if lon < -180 || lon > 180 {
			return bad("bbox_out_of_range", "bbox %s is %g; longitudes must be between -180 and 180", names[i*2], lon)
		}
	}
	for i, lat := range []float64{b.South, b.North} {
		if lat < -90 || lat > 90 {
			return bad("bbox_out_of_range", "bbox %s is %g; latitudes must be between -90 and 90", names[i*2+1], lat)
		}
	}
	if b.West >= b.East {
		return bad("bbox_order", "bbox west (%g) must be less than east (%g)", b.West, b.East)
	}
	if b.South >= b.North {
		return bad("bbox_order", "bbox south (%g) must be less than north (%g)", b.South, b.North)
	}
	if w := b.East - b.West; w > MaxBBoxDegrees {
		return bad("bbox_too_large", "bbox is %g degrees wide; at most %g degrees per side", w, MaxBBoxDegrees)
	}
	if h := b.North - b.South; h > MaxBBoxDegrees {
		return bad("bbox_too_large", "bbox is %g degrees tall; at most %g degrees per side", h, MaxBBoxDegrees)
	}
	return b, nil
}

// ParseDecimal reads s as a decimal number and nothing else: an optional
// sign, digits with an optional decimal point (at least one digit), and an
// optional exponent (e or E, an optional sign, digits) — the numbers of
// JSON, plus a leading + and a point with digits on one side only (1.,
// .5). strconv.ParseFloat alone reads more: underscores between digits
// (1_0 is 10), hexadecimal (0x1p-2), Inf and NaN; a query parameter must
// not mean a number its sender did not write. The value must be finite.
// Pure; safe for concurrent use.
func ParseDecimal(s string) (float64, bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
