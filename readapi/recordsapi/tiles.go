package recordsapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// The zoom levels parcel tiles are made at: below minTileZoom a tile
// would hold a whole region's parcels (the map shows them from there on).
const (
	minTileZoom = 10
	maxTileZoom = 22
)

// tileMaxAge is how long a client or cache may reuse a tile without asking
// (then it revalidates with its ETag).
const tileMaxAge = 60 * time.Second

// tile is GET /api/v1/tiles/{z}/{x}/{y}.mvt: the parcels of one Web
// Mercator tile as a Mapbox vector tile (layer parcels: apn, county,
// layers, score), filtered by layers, scored by weights and as_of like the
// signal report. Its ETag names the read model's position, the score's
// date and weights, so an unchanged tile is 304; an empty tile is 204.
func (s *server) tile(c *gin.Context) error {
	z, x, y, err := tileCoords(c.Param("z"), c.Param("x"), c.Param("y"))
	if err != nil {
		return err
	}
	layers, err := layerKeys(c.Query("layers"))
	if err != nil {
		return err
	}
	w, asOf, err := s.scoreParams(c)
	if err != nil {
		return err
	}
	var tile []byte
	var pos int64
	err = s.tiles.do(c.Request.Context(), func() (err error) {
		tile, pos, err = s.parcels.Tile(c.Request.Context(), z, x, y, layers, w, asOf)
		return err
	})
	if err != nil {
		return err
	}
	etag := fmt.Sprintf(`"%d-%s-%s"`, pos, asOf.Format("20060102"), w.Version)
	h := c.Writer.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(tileMaxAge.Seconds())))
	h.Set("Vary", "Accept-Encoding")
	if etagMatches(c.GetHeader("If-None-Match"), etag) {
		c.Status(http.StatusNotModified)
		return nil
	}
	if tile == nil {
		c.Status(http.StatusNoContent)
		return nil
	}
	c.Data(http.StatusOK, "application/vnd.mapbox-vector-tile", tile)
	return nil
}

// tileCoords reads z, x and y ("{y}.mvt"): whole numbers, z from
// minTileZoom to maxTileZoom, x and y from 0 to 2^z - 1.
func tileCoords(zs, xs, ys string) (z, x, y int, err error) {
	ys, ok := strings.CutSuffix(ys, ".mvt")
	if !ok {
		return 0, 0, 0, domain.Invalid("invalid_tile", "y", "a tile's path is /api/v1/tiles/{z}/{x}/{y}.mvt; got y %q", ys)
	}
	read := func(name, s string, hi int) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || !plainDigits(s) || n > hi {
			return 0, domain.Invalid("invalid_tile", name, "%s must be a whole number from 0 to %d; got %q", name, hi, s)
		}
		return n, nil
	}
	if z, err = read("z", zs, maxTileZoom); err != nil {
		return
	}
	if z < minTileZoom {
		return 0, 0, 0, domain.Invalid("zoom_too_low", "z", "parcel tiles start at zoom %d (a tile below it holds a whole region); got %d", minTileZoom, z)
	}
	if x, err = read("x", xs, 1<<z-1); err != nil {
		return
	}
	y, err = read("y", ys, 1<<z-1)
	return z, x, y, err
}

// etagMatches reports whether an If-None-Match header names etag (or is
// *), weak or strong (RFC 9110 section 13.1.2 compares weakly).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
