package cursor_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/readapi/recordsapi/cursor"
)

// newCodec is a codec of a key made for the test.
func newCodec(t testing.TB, seed byte) *cursor.Codec {
	t.Helper()
	c, err := cursor.New(bytes.Repeat([]byte{seed}, cursor.MinKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDecode(t *testing.T) {
	codec := newCodec(t, 1)
	baltimore := records.BBox{West: -76.72, South: 39.19, East: -76.52, North: 39.38}
	q := cursor.Query{BBox: baltimore, Layers: []string{"vacant", "tax_sale"}}
	key := parcels.ParcelKey{County: "24510", APN: "0001 006"}
	valid := codec.Encode(q, key)
	raw := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	tests := []struct {
		name   string
		q      cursor.Query
		cursor string
		want   *parcels.ParcelKey // nil and not bad: the first page
		bad    bool
	}{
		{name: "no cursor is the first page", q: q, cursor: ""},
		{name: "round trip", q: q, cursor: valid, want: &key},
		{name: "layers in another order are the same search", q: cursor.Query{BBox: baltimore, Layers: []string{"tax_sale", "vacant"}}, cursor: valid, want: &key},
		{name: "non-ASCII APN round trip", q: q, cursor: codec.Encode(q, parcels.ParcelKey{County: "12086", APN: "01-3114-040-0010 ñ"}),
			want: &parcels.ParcelKey{County: "12086", APN: "01-3114-040-0010 ñ"}},
		{name: "AAAA (three zero bytes)", q: q, cursor: "AAAA", bad: true},
		{name: "not base64url", q: q, cursor: "!!!!", bad: true},
		{name: "padded base64", q: q, cursor: valid + "=", bad: true},
		{name: "truncated", q: q, cursor: valid[:len(valid)-4], bad: true},
		{name: "header only, no APN", q: q, cursor: raw(append([]byte{1}, make([]byte, 15)...)), bad: true},
		{name: "trailing bytes", q: q, cursor: func() string {
			b, _ := base64.RawURLEncoding.DecodeString(valid)
			return raw(append(b, 'x'))
		}(), bad: true},
		{name: "another bbox", q: cursor.Query{BBox: records.BBox{West: -76.7, South: 39.2, East: -76.5, North: 39.3}, Layers: q.Layers}, cursor: valid, bad: true},
		{name: "another layer filter", q: cursor.Query{BBox: baltimore, Layers: []string{"vacant"}}, cursor: valid, bad: true},
		{name: "no layer filter", q: cursor.Query{BBox: baltimore}, cursor: valid, bad: true},
		{name: "unknown version", q: q, cursor: func() string {
			b, _ := base64.RawURLEncoding.DecodeString(valid)
			b[0] = 2
			return raw(b)
		}(), bad: true},
		{name: "NUL in the APN", q: q, cursor: codec.Encode(q, parcels.ParcelKey{County: "24510", APN: "0001\x00006"}), bad: true},
		{name: "invalid UTF-8 in the APN", q: q, cursor: codec.Encode(q, parcels.ParcelKey{County: "24510", APN: "\xff\xfe"}), bad: true},
		{name: "county not digits", q: q, cursor: codec.Encode(q, parcels.ParcelKey{County: "MD510", APN: "1"}), bad: true},
		{name: "another key's cursor", q: q, cursor: newCodec(t, 2).Encode(q, key), bad: true},
		{name: "the APN changed", q: q, cursor: func() string {
			b, _ := base64.RawURLEncoding.DecodeString(valid)
			b[len(b)-1]++ // 0001 006 -> 0001 007: a parcel of the caller's choosing
			return raw(b)
		}(), bad: true},
		{name: "an unauthenticated cursor of version 1", q: q, cursor: func() string {
			b, _ := base64.RawURLEncoding.DecodeString(valid)
			return raw(append([]byte{1}, b[1+8:]...))
		}(), bad: true},
		{name: "longer than any cursor", q: q, cursor: strings.Repeat("A", cursor.MaxLen+1), bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := codec.Decode(tc.q, tc.cursor)
			if tc.bad {
				var de *domain.Error
				if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || de.Code != "invalid_cursor" || de.Field != "cursor" {
					t.Fatalf("Decode(%q) = %v, %v; want invalid_cursor on field cursor", tc.cursor, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.cursor, err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("Decode(%q) = %+v, want %+v", tc.cursor, got, tc.want)
			}
		})
	}
}

func TestDecodeRanked(t *testing.T) {
	codec := newCodec(t, 1)
	q := cursor.Query{Layers: []string{"vacant"}, Search: "near -76.65 39.3 300"}
	key := parcels.ParcelKey{County: "24510", APN: "0001 003"}
	valid := codec.EncodeRanked(q, 12.345678901, key)
	k, rank, err := codec.DecodeRanked(q, valid)
	if err != nil || k == nil || *k != key || rank != 12.345678901 {
		t.Fatalf("round trip: %v %v %v", k, rank, err)
	}
	if k, _, err := codec.DecodeRanked(q, ""); k != nil || err != nil {
		t.Fatalf("no cursor: %v %v", k, err)
	}
	raw := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	b, _ := base64.RawURLEncoding.DecodeString(valid)
	nan := append([]byte{}, b...)
	copy(nan[9:17], []byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 1})
	for name, tc := range map[string]struct {
		q cursor.Query
		s string
	}{
		"another radius":                 {cursor.Query{Layers: q.Layers, Search: "near -76.65 39.3 301"}, valid},
		"another layer filter":           {cursor.Query{Search: q.Search}, valid},
		"a bbox search's cursor":         {q, codec.Encode(q, key)},
		"a NaN rank":                     {q, raw(nan)},
		"truncated":                      {q, valid[:len(valid)-3]},
		"a ranked cursor on a bbox page": {cursor.Query{}, codec.EncodeRanked(cursor.Query{}, 1, key)},
	} {
		var got error
		if name == "a ranked cursor on a bbox page" {
			_, got = codec.Decode(tc.q, tc.s)
		} else {
			_, _, got = codec.DecodeRanked(tc.q, tc.s)
		}
		var de *domain.Error
		if !errors.As(got, &de) || de.Code != "invalid_cursor" || de.Field != "cursor" {
			t.Errorf("%s: %v, want invalid_cursor", name, got)
		}
	}
}
