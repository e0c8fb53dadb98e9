package records

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/readapi/records/cursor"
)

// parcelsInBBox is GET /api/v1/parcels: public parcels with coordinates
// inside the box, with their layer signals, as a GeoJSON FeatureCollection,
// paged by an opaque cursor. Never contact data.
func (s *server) parcelsInBBox(c *gin.Context) error {
	b, err := records.ParseBBox(c.Query("bbox"))
	if err != nil {
		return err
	}
	layers, err := records.ParseLayers(c.Query("layers"))
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return err
	}
	keys := make([]string, len(layers))
	for i, l := range layers {
		keys[i] = string(l)
	}
	query := cursor.Query{BBox: b, Layers: keys}
	after, err := cursor.Decode(query, c.Query("cursor"))
	if err != nil {
		return err
	}
	got, err := s.parcels.InBBox(c.Request.Context(), b, keys, after, limit+1)
	if err != nil {
		return err
	}
	var next *string
	if len(got) > limit {
		got = got[:limit]
		cur := cursor.Encode(query, got[len(got)-1].ParcelKey)
		next = &cur
	}
	// Written by hand: the signals are pre-rendered JSON from the read
	// model, and this is the hottest path of the service.
	buf := make([]byte, 0, 256+len(got)*512)
	buf = append(buf, `{"type":"FeatureCollection","bbox":`...)
	buf, _ = appendJSON(buf, [4]float64{b.West, b.South, b.East, b.North})
	buf = append(buf, `,"layers":`...)
	if keys == nil {
		keys = []string{}
	}
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
		buf = append(buf, `,"geometry":{"type":"Point","coordinates":[`...)
		buf = strconv.AppendFloat(buf, p.Lon, 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, p.Lat, 'f', -1, 64)
		buf = append(buf, `]},"properties":{"county":`...)
		buf = appendJSONString(buf, p.County)
		buf = append(buf, `,"apn":`...)
		buf = appendJSONString(buf, p.APN)
		buf = append(buf, `,"address":`...)
		buf = appendJSONString(buf, p.Address)
		buf = append(buf, `,"source_url":`...)
		buf = appendJSONString(buf, p.SourceURL)
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
	buf = strconv.AppendInt(buf, int64(limit), 10)
	buf = append(buf, `,"next_cursor":`...)
	buf, _ = appendJSON(buf, next)
	buf = append(buf, '}')
	c.Data(http.StatusOK, "application/json; charset=utf-8", buf)
	return nil
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
