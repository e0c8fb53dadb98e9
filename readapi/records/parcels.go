package records

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/records"
)

type geometry struct {
	Type        string     `json:"type"`
	Coordinates [2]float64 `json:"coordinates"`
}

type parcelProps struct {
	County    string          `json:"county"`
	APN       string          `json:"apn"`
	Address   string          `json:"address"`
	SourceURL string          `json:"source_url"`
	Layers    []string        `json:"layers"`
	Signals   json.RawMessage `json:"signals"`
}

type feature struct {
	Type       string      `json:"type"`
	ID         string      `json:"id"`
	Geometry   geometry    `json:"geometry"`
	Properties parcelProps `json:"properties"`
}

// parcelsInBBox is GET /api/v1/parcels: public parcels with coordinates
// inside the box, with their layer signals, as a GeoJSON FeatureCollection,
// paged by an opaque cursor. Never contact data.
func (s *server) parcelsInBBox(c *gin.Context) {
	b, err := records.ParseBBox(c.Query("bbox"))
	if err != nil {
		fail(c, err)
		return
	}
	layers, err := records.ParseLayers(c.Query("layers"))
	if err != nil {
		fail(c, err)
		return
	}
	limit, err := intParam(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		fail(c, err)
		return
	}
	after, err := decodeCursor(c.Query("cursor"))
	if err != nil {
		fail(c, err)
		return
	}
	keys := make([]string, len(layers))
	for i, l := range layers {
		keys[i] = string(l)
	}
	got, err := s.parcels.InBBox(c.Request.Context(), b, keys, after, limit+1)
	if err != nil {
		fail(c, err)
		return
	}
	var next *string
	if len(got) > limit {
		got = got[:limit]
		cur := encodeCursor(got[len(got)-1].ParcelKey)
		next = &cur
	}
	fs := make([]feature, len(got))
	for i, p := range got {
		fs[i] = feature{Type: "Feature", ID: p.County + ":" + p.APN, Geometry: geometry{Type: "Point", Coordinates: [2]float64{p.Lon, p.Lat}},
			Properties: parcelProps{County: p.County, APN: p.APN, Address: p.Address, SourceURL: p.SourceURL, Layers: p.Layers, Signals: p.Signals}}
		if fs[i].Properties.Layers == nil {
			fs[i].Properties.Layers = []string{}
		}
	}
	if keys == nil {
		keys = []string{}
	}
	c.JSON(http.StatusOK, gin.H{"type": "FeatureCollection", "bbox": [4]float64{b.West, b.South, b.East, b.North}, "layers": keys,
		"features": fs, "count": len(fs), "limit": limit, "next_cursor": next})
}
