package recordsapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/readapi/recordsapi/tilecache"
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

// tileCacheBytes bounds the tiles the records process keeps in memory
// (tilecache): the least recently asked are dropped past it.
const tileCacheBytes = 64 << 20

// tile is GET /api/v1/tiles/{z}/{x}/{y}.mvt: the parcels of one Web
// Mercator tile as a Mapbox vector tile (layer parcels: apn, county,
// layers, score), filtered by layers, scored by weights and as_of like the
// signal report. Its ETag names the read model's position, the score's
// date and weights, so an unchanged tile is 304 (read before any tile is
// made); an empty tile is 204. Tiles are kept in a size-bounded cache
// filed under that position: the position is read on every request, so a
// tile made before a load completed is never served after it.
// X-Tile-Cache says whether the answer came from the cache (hit) or was
// made (miss).
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
	ctx := c.Request.Context()
	pos, err := s.parcels.TilePosition(ctx)
	if err != nil {
		return err
	}
	s.tileCache.Seen(pos)
	day := asOf.Format(time.DateOnly)
	sorted := slices.Clone(layers)
	slices.Sort(sorted)
	key := tilecache.Key{Z: z, X: x, Y: y, Layers: strings.Join(slices.Compact(sorted), ","), Weights: w.Version, Day: day, Position: pos}
	if etagMatches(c.GetHeader("If-None-Match"), tileETag(key)) {
		setTileHeaders(c, key)
		c.Status(http.StatusNotModified)
		return nil
	}
	tile, hit := s.tileCache.Get(key)
	if !hit {
		if tile, key, err = s.makeTile(ctx, key, layers, w, asOf); err != nil {
			return err
		}
	}
	setTileHeaders(c, key)
	c.Header("X-Tile-Cache", map[bool]string{true: "hit", false: "miss"}[hit])
	if tile == nil {
		c.Status(http.StatusNoContent)
		return nil
	}
	c.Data(http.StatusOK, "application/vnd.mapbox-vector-tile", tile)
	return nil
}

// makeTile makes the tile of key in a turn of the tiles' route, once for
// all the requests asking for it at the same time, and caches it under
// the position it was made at (returned in the key: a load may have
// completed since the position was read).
func (s *server) makeTile(ctx context.Context, key tilecache.Key, layers []string, w records.WeightTable, asOf time.Time) ([]byte, tilecache.Key, error) {
	type made struct {
		tile []byte
		pos  int64
	}
	v, err, _ := s.tileFlight.Do(fmt.Sprintf("%+v", key), func() (any, error) {
		var m made
		err := s.tiles.do(ctx, func() (err error) {
			m.tile, m.pos, err = s.parcels.Tile(ctx, key.Z, key.X, key.Y, layers, w, asOf)
			return err
		})
		if err != nil {
			return nil, err
		}
		k := key
		k.Position = m.pos
		s.tileCache.Put(k, m.tile)
		return m, nil
	})
	if err != nil {
		return nil, key, err
	}
	m := v.(made)
	key.Position = m.pos
	return m.tile, key, nil
}

// tileETag is the ETag of the tile of key: the read model's position, the
// score's day and the weights version (the rest is the URL).
func tileETag(key tilecache.Key) string {
	return fmt.Sprintf(`"%d-%s-%s"`, key.Position, strings.ReplaceAll(key.Day, "-", ""), key.Weights)
}

func setTileHeaders(c *gin.Context, key tilecache.Key) {
	h := c.Writer.Header()
	h.Set("ETag", tileETag(key))
	h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(tileMaxAge.Seconds())))
	h.Set("Vary", "Accept-Encoding")
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
