package recordsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/recordsapi/cursor"
)

// parcelSearch is one parcel search: its kind and parameters, the layers
// filter and the page asked for.
type parcelSearch struct {
	kind    string // bbox, near, address, apn or polygon
	bbox    records.BBox
	near    records.Near
	address string // normalized
	apn     string // normalized
	county  string
	polygon records.Polygon
	layers  []string
	limit   int
	cursor  string
}

// searchParams are the search parameters of GET /api/v1/parcels, one kind
// of search each (radius_m goes with near, county with apn).
var searchParams = []string{"bbox", "near", "address", "apn"}

// parcelsSearch is GET /api/v1/parcels: public parcels found by one of four
// searches (inside a bbox; near a point, nearest first; by address, best
// match first; by APN), with their layer signals, as a GeoJSON
// FeatureCollection paged by an opaque cursor. Never contact data.
func (s *server) parcelsSearch(c *gin.Context) error {
	ps, err := parcelSearchOf(c)
	if err != nil {
		return err
	}
	return s.search(c, ps)
}

// parcelsInPolygon is POST /api/v1/parcels/query: the parcels inside a
// GeoJSON Polygon, like a bbox search.
func (s *server) parcelsInPolygon(c *gin.Context) error {
	var body struct {
		Geometry json.RawMessage `json:"geometry"`
		Layers   []string        `json:"layers"`
		Limit    *int            `json:"limit"`
		Cursor   string          `json:"cursor"`
	}
	raw, err := io.ReadAll(io.LimitReader(c.Request.Body, maxQueryBodyBytes+1))
	if err != nil {
		return err
	}
	if len(raw) > maxQueryBodyBytes {
		return httpx.TooLarge(maxQueryBodyBytes)
	}
	if err := httpx.UniqueKeys(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return domain.Invalid("invalid_json", "", `the body must be a JSON object like {"geometry":{"type":"Polygon","coordinates":[[[lon,lat],...]]},"layers":["tax_sale"],"limit":100,"cursor":"..."} (nothing else, at most %d bytes): %v`, maxQueryBodyBytes, err)
	}
	if dec.More() {
		return domain.Invalid("invalid_json", "", "the body must be one JSON object, with nothing after it")
	}
	ps := parcelSearch{kind: "polygon", limit: defaultLimit, cursor: body.Cursor}
	if ps.polygon, err = records.ParsePolygon(body.Geometry); err != nil {
		return err
	}
	if ps.layers, err = layerKeys(strings.Join(body.Layers, ",")); err != nil {
		return err
	}
	if body.Limit != nil {
		if *body.Limit < 1 || *body.Limit > maxLimit {
			return domain.Invalid("invalid_limit", "limit", "limit must be a whole number from 1 to %d; got %d", maxLimit, *body.Limit)
		}
		ps.limit = *body.Limit
	}
	return s.search(c, ps)
}

// maxQueryBodyBytes bounds POST /api/v1/parcels/query's body: room for a
// polygon of records.MaxPolygonPositions positions written out at length.
const maxQueryBodyBytes = 128 << 10

// parcelSearchOf reads the search of GET /api/v1/parcels: exactly one of
// bbox, near (with radius_m), address and apn (with county, optionally).
func parcelSearchOf(c *gin.Context) (parcelSearch, error) {
	var ps parcelSearch
	var given []string
	for _, p := range searchParams {
		if _, ok := c.GetQuery(p); ok {
			given = append(given, p)
		}
	}
	switch {
	case len(given) == 0:
		return ps, domain.Invalid("bbox_required", "bbox", "a search is required: bbox=west,south,east,north, near=lon,lat&radius_m=N, address=... or apn=... (with county=, optionally)")
	case len(given) > 1:
		return ps, domain.Invalid("search_conflict", given[1], "give one search, not %s: bbox, near, address and apn each search alone", strings.Join(given, " and "))
	}
	ps.kind = given[0]
	if _, ok := c.GetQuery("radius_m"); ok && ps.kind != "near" {
		return ps, domain.Invalid("radius_without_near", "radius_m", "radius_m goes with near=lon,lat only")
	}
	if _, ok := c.GetQuery("county"); ok && ps.kind != "apn" {
		return ps, domain.Invalid("county_without_apn", "county", "county goes with apn= only")
	}
	var err error
	switch ps.kind {
	case "bbox":
		ps.bbox, err = records.ParseBBox(c.Query("bbox"))
	case "near":
		ps.near, err = records.ParseNear(c.Query("near"), c.Query("radius_m"))
	case "address":
		ps.address, err = records.ParseAddressQuery(c.Query("address"))
	case "apn":
		if ps.apn, err = records.ParseAPNQuery(c.Query("apn")); err == nil {
			ps.county, err = countyParam(c)
		}
	}
	if err != nil {
		return ps, err
	}
	if ps.layers, err = layerKeys(c.Query("layers")); err != nil {
		return ps, err
	}
	if ps.limit, err = intParam(c, "limit", defaultLimit, 1, maxLimit); err != nil {
		return ps, err
	}
	ps.cursor = c.Query("cursor")
	return ps, nil
}

// layerKeys reads a layers filter into its keys, verbatim
// (domain.Verbatim: no space in or around a key).
func layerKeys(s string) ([]string, error) {
	if err := domain.Verbatim("layers", s); err != nil {
		return nil, err
	}
	layers, err := records.ParseLayers(s)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(layers))
	for i, l := range layers {
		keys[i] = string(l)
	}
	return keys, nil
}

// cursorQuery is what a cursor of ps is bound to: the search written out.
func (ps parcelSearch) cursorQuery() cursor.Query {
	q := cursor.Query{Layers: ps.layers}
	switch ps.kind {
	case "bbox":
		q.BBox = ps.bbox
	case "near":
		q.Search = fmt.Sprintf("near %v %v %v", ps.near.Lon, ps.near.Lat, ps.near.RadiusM)
	case "address":
		q.Search = "address " + ps.address
	case "apn":
		q.Search = "apn " + ps.apn + " " + ps.county
	case "polygon":
		q.Search = "polygon " + ps.polygon.GeoJSON
	}
	return q
}

// ranked reports whether ps pages by rank (distance, match score).
func (ps parcelSearch) ranked() bool { return ps.kind == "near" || ps.kind == "address" }

// search runs ps and writes its page.
func (s *server) search(c *gin.Context, ps parcelSearch) error {
	ctx, q := c.Request.Context(), ps.cursorQuery()
	var got []parcels.ParcelFeature
	if ps.ranked() {
		var after *parcels.RankedKey
		k, rank, err := s.cursors.DecodeRanked(q, ps.cursor)
		if err != nil {
			return err
		}
		if k != nil {
			after = &parcels.RankedKey{Rank: rank, ParcelKey: *k}
		}
		if ps.kind == "near" {
			got, err = s.parcels.Near(ctx, ps.near, ps.layers, after, ps.limit+1)
		} else {
			got, err = s.parcels.ByAddress(ctx, ps.address, ps.layers, after, ps.limit+1)
		}
		if err != nil {
			return err
		}
	} else {
		after, err := s.cursors.Decode(q, ps.cursor)
		if err != nil {
			return err
		}
		switch ps.kind {
		case "bbox":
			got, err = s.parcels.InBBox(ctx, ps.bbox, ps.layers, after, ps.limit+1)
		case "apn":
			got, err = s.parcels.ByAPN(ctx, ps.apn, ps.county, ps.layers, after, ps.limit+1)
		case "polygon":
			// The body is read and checked: only the query takes a turn.
			err = s.polygons.do(ctx, func() (err error) {
				got, err = s.parcels.InPolygon(ctx, ps.polygon, ps.layers, after, ps.limit+1)
				return err
			})
		}
		if err != nil {
			return err
		}
	}
	var next *string
	if len(got) > ps.limit {
		got = got[:ps.limit]
		last := got[len(got)-1]
		cur := s.cursors.Encode(q, last.ParcelKey)
		if ps.ranked() {
			cur = s.cursors.EncodeRanked(q, last.Rank, last.ParcelKey)
		}
		next = &cur
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", ps.render(got, next))
	return nil
}

// render writes a page of ps as a GeoJSON FeatureCollection: the search's
// own members, the layers filter, the features, count, limit and
// next_cursor. Written by hand: the signals are pre-rendered JSON from
// the read model, and this is the hottest path of the service.
func (ps parcelSearch) render(got []parcels.ParcelFeature, next *string) []byte {
	buf := make([]byte, 0, 256+len(got)*512)
	buf = append(buf, `{"type":"FeatureCollection",`...)
	switch ps.kind {
	case "bbox":
		buf = append(buf, `"bbox":`...)
		buf, _ = appendJSON(buf, [4]float64{ps.bbox.West, ps.bbox.South, ps.bbox.East, ps.bbox.North})
	case "polygon":
		b := ps.polygon.BBox
		buf = append(buf, `"bbox":`...)
		buf, _ = appendJSON(buf, [4]float64{b.West, b.South, b.East, b.North})
	case "near":
		buf = append(buf, `"near":`...)
		buf, _ = appendJSON(buf, [2]float64{ps.near.Lon, ps.near.Lat})
		buf = append(buf, `,"radius_m":`...)
		buf, _ = appendJSON(buf, ps.near.RadiusM)
	case "address":
		buf = append(buf, `"address":`...)
		buf = appendJSONString(buf, ps.address)
	case "apn":
		buf = append(buf, `"apn":`...)
		buf = appendJSONString(buf, ps.apn)
		buf = append(buf, `,"county":`...)
		if ps.county == "" {
			buf = append(buf, "null"...)
		} else {
			buf = appendJSONString(buf, ps.county)
		}
	}
	keys := ps.layers
	if keys == nil {
		keys = []string{}
	}
	buf = append(buf, `,"layers":`...)
	buf, _ = appendJSON(buf, keys)
	buf = append(buf, `,"features":[`...)
	for i, p := range got {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"type":"Feature","id":"`...)
		buf = appendJSONStringBody(buf, p.County)
		buf = append(buf, ':')
		buf = appendJSONStringBody(buf, p.APN)
		buf = append(buf, '"')
		if p.Unplaced {
			buf = append(buf, `,"geometry":null,"properties":{"county":`...)
		} else {
			buf = append(buf, `,"geometry":{"type":"Point","coordinates":[`...)
			buf = strconv.AppendFloat(buf, p.Lon, 'f', -1, 64)
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, p.Lat, 'f', -1, 64)
			buf = append(buf, `]},"properties":{"county":`...)
		}
		buf = appendJSONString(buf, p.County)
		buf = append(buf, `,"apn":`...)
		buf = appendJSONString(buf, p.APN)
		buf = append(buf, `,"address":`...)
		buf = appendJSONString(buf, p.Address)
		buf = append(buf, `,"source_url":`...)
		buf = appendJSONString(buf, p.SourceURL)
		switch ps.kind {
		case "near":
			buf = append(buf, `,"distance_m":`...)
			buf = strconv.AppendFloat(buf, math.Round(p.Rank*10)/10, 'f', -1, 64)
		case "address":
			buf = append(buf, `,"match_score":`...)
			buf = strconv.AppendFloat(buf, math.Round(p.Rank*1000)/1000, 'f', -1, 64)
		}
		// Both rendered by PostgreSQL (array_to_json, jsonb): valid JSON.
		buf = append(buf, `,"layers":`...)
		buf = append(buf, p.Layers...)
		buf = append(buf, `,"signals":`...)
		buf = append(buf, p.Signals...)
		buf = append(buf, "}}"...)
	}
	buf = append(buf, `],"count":`...)
	buf = strconv.AppendInt(buf, int64(len(got)), 10)
	buf = append(buf, `,"limit":`...)
	buf = strconv.AppendInt(buf, int64(ps.limit), 10)
	buf = append(buf, `,"next_cursor":`...)
	buf, _ = appendJSON(buf, next)
	return append(buf, '}')
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML-safe, U+2028/U+2029 escaped, invalid UTF-8 replaced).
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	buf = appendJSONStringBody(buf, s)
	return append(buf, '"')
}

// appendJSONStringBody appends s escaped for the inside of a JSON string.
// The common case (printable ASCII with nothing to escape) is one append.
func appendJSONStringBody(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(buf, b[1:len(b)-1]...)
		}
	}
	return append(buf, s...)
}

func appendJSON(buf []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(buf, b...), err
}
