package records_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
)

// TestParseOGCBBox: OGC API – Features Part 1's bbox
// (/req/core/fc-bbox-definition): four numbers, or six (the heights are
// read and ignored: the features are 2D), and a west edge greater than
// the east edge is a box across the antimeridian, split in two. Unlike
// the records search's bbox, its size is not bounded.
func TestParseOGCBBox(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []records.BBox
	}{
		{"four numbers", "-76.7,39.2,-76.5,39.3", []records.BBox{{West: -76.7, South: 39.2, East: -76.5, North: 39.3}}},
		{"six numbers", "-76.7,39.2,-10,-76.5,39.3,250.5", []records.BBox{{West: -76.7, South: 39.2, East: -76.5, North: 39.3}}},
		{"across the antimeridian", "179.5,51,-179.5,52", []records.BBox{{West: 179.5, South: 51, East: 180, North: 52}, {West: -180, South: 51, East: -179.5, North: 52}}},
		{"across the antimeridian, 3D", "179.5,51,0,-179.5,52,10", []records.BBox{{West: 179.5, South: 51, East: 180, North: 52}, {West: -180, South: 51, East: -179.5, North: 52}}},
		{"from the antimeridian", "180,51,-179,52", []records.BBox{{West: -180, South: 51, East: -179, North: 52}}},
		// No size bound: an OGC client sends the box of its view (the
		// items route pages it, bounded by limit and statement timeout).
		{"across the antimeridian, 20 degrees wide", "170,51,-170,52", []records.BBox{{West: 170, South: 51, East: 180, North: 52}, {West: -180, South: 51, East: -170, North: 52}}},
		{"a state", "-79.5,37.9,-75.0,39.8", []records.BBox{{West: -79.5, South: 37.9, East: -75.0, North: 39.8}}},
		{"the world", "-180,-90,180,90", []records.BBox{{West: -180, South: -90, East: 180, North: 90}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := records.ParseOGCBBox(c.in)
			if err != nil {
				t.Fatalf("ParseOGCBBox(%q): %v", c.in, err)
			}
			if got := b.Boxes(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ParseOGCBBox(%q).Boxes() = %+v, want %+v", c.in, got, c.want)
			}
		})
	}
	for _, c := range []struct{ name, in, code, says string }{
		{"five numbers", "1,2,3,4,5", "bbox_arity", "or six"},
		{"heights reversed", "-76.7,39.2,10,-76.5,39.3,-10", "bbox_order", "minimum height"},
		{"a height not a number", "-76.7,39.2,x,-76.5,39.3,1", "bbox_not_a_number", "minimum height"},
		{"south above north", "-76.7,39.3,-76.5,39.2", "bbox_order", "south"},
		{"equal edges", "10,51,10,52", "bbox_order", "west"},
		{"out of range", "181,51,-179,52", "bbox_out_of_range", "longitudes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := records.ParseOGCBBox(c.in)
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != c.code || de.Field != "bbox" || !strings.Contains(de.Message, c.says) {
				t.Fatalf("ParseOGCBBox(%q) = %v, want %s saying %q", c.in, err, c.code, c.says)
			}
		})
	}
}
