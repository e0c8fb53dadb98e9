package records

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/domain"
)

// MaxBBoxDegrees is the most a bounding box of the records search
// (ParseBBox) may span per side. The OGC items' bbox (ParseOGCBBox) has
// no such bound: its pages are bounded by their limit, their statement
// timeout and the filtered turns.
const MaxBBoxDegrees = 2.0

// BBox is a WGS 84 bounding box: West < East, South < North (ParseBBox:
// each side at most MaxBBoxDegrees). ParseOGCBBox also writes a box
// across the antimeridian, West > East; Boxes splits it.
type BBox struct {
	West, South, East, North float64
}

// ParseBBox reads "west,south,east,north" and checks it: four decimal
// numbers (ParseDecimal), longitudes in [-180, 180], latitudes in [-90, 90], west < east,
// south < north, at most MaxBBoxDegrees per side. Every failure is an
// ErrInvalid error on field bbox whose message says what is wrong.
func ParseBBox(s string) (BBox, error) {
	v, err := bboxNumbers(s, "bbox needs exactly four comma-separated numbers west,south,east,north; got %d", 4)
	if err != nil {
		return BBox{}, err
	}
	b := BBox{West: v[0], South: v[1], East: v[2], North: v[3]}
	return b, b.check(false, MaxBBoxDegrees)
}

func invalidBBox(code, format string, args ...any) error {
	return domain.Invalid(code, "bbox", format, args...)
}

// bboxNumbers reads s as comma-separated decimal numbers, as many as one
// of counts (arity: the message when not, given the count found).
func bboxNumbers(s, arity string, counts ...int) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, invalidBBox("bbox_required", "bbox is required: west,south,east,north in degrees (WGS 84), e.g. bbox=-76.62,39.28,-76.60,39.30")
	}
	if err := domain.Verbatim("bbox", s); err != nil {
		return nil, err
	}
	parts := strings.Split(s, ",")
	if !slices.Contains(counts, len(parts)) {
		return nil, invalidBBox("bbox_arity", arity, len(parts))
	}
	names := []string{"west", "south", "east", "north"}
	if len(parts) == 6 {
		names = []string{"west", "south", "minimum height", "east", "north", "maximum height"}
	}
	v := make([]float64, len(parts))
	for i, p := range parts {
		f, ok := ParseDecimal(strings.TrimSpace(p))
		if !ok {
			return nil, invalidBBox("bbox_not_a_number", "bbox %s is %q, not a decimal number (digits, an optional sign, point and exponent, like -76.62 or 39.3)", names[i], strings.TrimSpace(p))
		}
		v[i] = f
	}
	return v, nil
}

// check checks b's ranges, order and size (at most maxDegrees per side,
// when more than 0); across admits West > East, a box across the
// antimeridian.
func (b BBox) check(across bool, maxDegrees float64) error {
	names := [4]string{"west", "south", "east", "north"}
	for i, lon := range []float64{b.West, b.East} {
		if lon < -180 || lon > 180 {
			return invalidBBox("bbox_out_of_range", "bbox %s is %g; longitudes must be between -180 and 180", names[i*2], lon)
		}
	}
	for i, lat := range []float64{b.South, b.North} {
		if lat < -90 || lat > 90 {
			return invalidBBox("bbox_out_of_range", "bbox %s is %g; latitudes must be between -90 and 90", names[i*2+1], lat)
		}
	}
	switch {
	case across && b.West > b.East:
	case b.West >= b.East:
		if across {
			return invalidBBox("bbox_order", "bbox west (%g) must differ from east (%g) (west greater than east is a box across the antimeridian)", b.West, b.East)
		}
		return invalidBBox("bbox_order", "bbox west (%g) must be less than east (%g)", b.West, b.East)
	}
	if b.South >= b.North {
		return invalidBBox("bbox_order", "bbox south (%g) must be less than north (%g)", b.South, b.North)
	}
	if maxDegrees <= 0 {
		return nil
	}
	w, h := b.Span()
	if w > maxDegrees {
		return invalidBBox("bbox_too_large", "bbox is %g degrees wide; at most %g degrees per side", w, maxDegrees)
	}
	if h > maxDegrees {
		return invalidBBox("bbox_too_large", "bbox is %g degrees tall; at most %g degrees per side", h, maxDegrees)
	}
	return nil
}

// Span returns b's width and height in degrees, the width counted across
// the antimeridian for a box with West > East.
func (b BBox) Span() (width, height float64) {
	width = b.East - b.West
	if b.West > b.East {
		width += 360
	}
	return width, b.North - b.South
}

// ParseOGCBBox reads the bbox of OGC API – Features Part 1
// (/req/core/fc-bbox-definition), in CRS84: four numbers west,south,
// east,north, or six, west,south,minimum height,east,north,maximum
// height, whose heights are checked (numbers, minimum <= maximum) and
// ignored (the features are 2D points). A west edge greater than the east
// edge is a box across the antimeridian (Part 1, 7.15.3): Boxes splits
// it. The other rules are ParseBBox's but its size: a box up to the whole
// world is read (an OGC client sends the box of its view, or the
// collection's advertised extent); the items route bounds its cost.
func ParseOGCBBox(s string) (BBox, error) {
	v, err := bboxNumbers(s, "bbox needs four comma-separated numbers west,south,east,north, or six west,south,minimum height,east,north,maximum height; got %d", 4, 6)
	if err != nil {
		return BBox{}, err
	}
	if len(v) == 6 {
		if v[2] > v[5] {
			return BBox{}, invalidBBox("bbox_order", "bbox minimum height (%g) must not be more than its maximum height (%g)", v[2], v[5])
		}
		v = []float64{v[0], v[1], v[3], v[4]}
	}
	b := BBox{West: v[0], South: v[1], East: v[2], North: v[3]}
	return b, b.check(true, 0)
}

// Boxes returns b as boxes with West < East: b itself, or the two halves
// of a box across the antimeridian (West > East), west of it first (a
// half that is only the antimeridian is left out: it is the other half's
// edge).
func (b BBox) Boxes() []BBox {
	if b.West < b.East {
		return []BBox{b}
	}
	west, east := BBox{West: b.West, South: b.South, East: 180, North: b.North}, BBox{West: -180, South: b.South, East: b.East, North: b.North}
	switch {
	case b.West == 180:
		return []BBox{east}
	case b.East == -180:
		return []BBox{west}
	}
	return []BBox{west, east}
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
