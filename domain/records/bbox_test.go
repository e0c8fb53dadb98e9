package records_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
)

func TestParseBBox(t *testing.T) {
	tests := []struct {
		name, in, code, says string
	}{
		{"missing", "", "bbox_required", "required"},
		{"three numbers", "-76.7,39.2,-76.5", "bbox_arity", "got 3"},
		{"five numbers", "-76.7,39.2,-76.5,39.3,1", "bbox_arity", "got 5"},
		{"NaN", "NaN,39.2,-76.5,39.3", "bbox_not_a_number", "west"},
		{"Inf", "-76.7,39.2,+Inf,39.3", "bbox_not_a_number", "east"},
		{"word", "-76.7,abc,-76.5,39.3", "bbox_not_a_number", "south"},
		{"underscores", "1_0,39.2,1_1,39.3", "bbox_not_a_number", "west"},
		{"hexadecimal", "-76.7,39.2,0x1p-2,39.3", "bbox_not_a_number", "east"},
		{"infinity spelt out", "-76.7,39.2,-76.5,infinity", "bbox_not_a_number", "north"},
		{"2.5 degrees wide", "-78,39,-75.5,39.5", "bbox_too_large", "2.5 degrees wide"},
		{"2.5 degrees tall", "-76,38,-75.5,40.5", "bbox_too_large", "tall"},
		{"west > east", "-76.5,39.2,-76.7,39.3", "bbox_order", "west"},
		{"west = east", "-76.5,39.2,-76.5,39.3", "bbox_order", "west"},
		{"south > north", "-76.7,39.3,-76.5,39.2", "bbox_order", "south"},
		{"longitude out of range", "-181,39.2,-179.5,39.3", "bbox_out_of_range", "longitudes"},
		{"latitude out of range", "-76.7,90.5,-76.5,91", "bbox_out_of_range", "latitudes"},
		{"a space inside", "-76.72, 39.19,-76.52,39.38", "whitespace_in_value", "exactly as sent"},
		{"a space around", " -76.72,39.19,-76.52,39.38", "whitespace_in_value", "byte 0"},
		{"a tab", "-76.72,39.19,-76.52,39.38\t", "whitespace_in_value", "whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := records.ParseBBox(tt.in)
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("ParseBBox(%q) = %v, want an invalid-input error", tt.in, err)
			}
			if de.Code != tt.code || de.Field != "bbox" || !strings.Contains(de.Message, tt.says) {
				t.Fatalf("ParseBBox(%q) = %s/%s %q, want code %s and a message saying %q", tt.in, de.Code, de.Field, de.Message, tt.code, tt.says)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		b, err := records.ParseBBox("-76.72,39.19,-76.52,39.38")
		if err != nil {
			t.Fatal(err)
		}
		if b != (records.BBox{West: -76.72, South: 39.19, East: -76.52, North: 39.38}) {
			t.Fatalf("got %+v", b)
		}
		if _, err := records.ParseBBox("-78,39,-76,41"); err != nil {
			t.Fatalf("exactly 2 degrees per side must pass: %v", err)
		}
	})
}

// TestParseDecimal: only what a person writes as a decimal number is read.
func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true},
		{"-76.62", -76.62, true},
		{"+39.3", 39.3, true},
		{"39.", 39, true},
		{".5", 0.5, true},
		{"-.5", -0.5, true},
		{"1e1", 10, true},
		{"7.6E+1", 76, true},
		{"2.5e-1", 0.25, true},
		{"007", 7, true},
		{"", 0, false},
		{"-", 0, false},
		{".", 0, false},
		{"-.", 0, false},
		{"1_0", 0, false},
		{"1_000.5", 0, false},
		{"0x10", 0, false},
		{"0x1p-2", 0, false},
		{"Inf", 0, false},
		{"-infinity", 0, false},
		{"NaN", 0, false},
		{"1e", 0, false},
		{"1e+", 0, false},
		{"1e999", 0, false},
		{"1.2.3", 0, false},
		{"1,5", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"--1", 0, false},
		{"١", 0, false}, // an Arabic-Indic digit
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := records.ParseDecimal(tc.in)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("ParseDecimal(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseLayers(t *testing.T) {
	ls, err := records.ParseLayers("vacant, tax_sale,vacant")
	if err != nil || len(ls) != 2 || ls[0] != records.Vacant || ls[1] != records.TaxSale {
		t.Fatalf("got %v %v", ls, err)
	}
	if ls, err := records.ParseLayers(""); err != nil || ls != nil {
		t.Fatalf("empty: %v %v", ls, err)
	}
	_, err = records.ParseLayers("vacant,haunted")
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("unknown layer: %v", err)
	}
	for _, k := range records.LayerKeys() {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("the message %q does not list %s", err, k)
		}
	}
}

// FuzzParseBBoxAndLayers: the records service's bbox and layers parameters
// are refused with a validation error or parse into a box within the
// rules and known layers.
func FuzzParseBBoxAndLayers(f *testing.F) {
	for _, s := range [][2]string{{"-76.66,39.30,-76.64,39.32", "vacant"}, {"1,2,3", ""}, {"NaN,0,1,1", "vacant,%00"},
		{"-181,0,0,1", "x"}, {"0,0,3,1", "vacant,vacant"}, {"1e308,1e308,1e308,1e308", ",,"}, {" 0, 0 ,1 ,1", "VACANT"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, bbox, layers string) {
		b, err := records.ParseBBox(bbox)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("ParseBBox(%q) = %v, not a validation error", bbox, err)
			}
		} else {
			if b.East-b.West > 2 || b.North-b.South > 2 || b.West > b.East || b.South > b.North ||
				b.West < -180 || b.East > 180 || b.South < -90 || b.North > 90 ||
				math.IsNaN(b.West+b.East+b.South+b.North) {
				t.Fatalf("ParseBBox(%q) accepted %+v", bbox, b)
			}
		}
		ls, err := records.ParseLayers(layers)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("ParseLayers(%q) = %v, not a validation error", layers, err)
			}
			return
		}
		for _, l := range ls {
			if _, ok := l.Info(); !ok {
				t.Fatalf("ParseLayers(%q) accepted unknown layer %q", layers, l)
			}
		}
	})
}
