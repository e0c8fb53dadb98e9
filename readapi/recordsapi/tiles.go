package recordsapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/recordsapi/tilecache"
	"github.com/arr-dev/arr/readapi/recordsapi/tileflight"
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

// tile is GET and HEAD /api/v1/tiles/{z}/{x}/{y}.mvt: the parcels of one
// Web Mercator tile as a Mapbox vector tile (layer parcels: apn, county,
// layers, score; or clusters past the zoom's cap), filtered by layers,
// scored by weights and as_of like the signal report. HEAD answers the
// same status and headers with no body. Its ETag names the read model's
// version the tile was made at and the first bytes of the tile's SHA-256
// (a strong validator of its bytes); an ETag in If-None-Match that the
// tile has is 304; an empty tile is 204. Tiles are kept in a size-bounded
// cache of one read-model version: the version is read on every request
// (before the cache is asked), so a tile made before a load completed, or
// before a rebuild, is never served after it. X-Tile-Cache says whether
// the answer came from the cache (hit) or was made (miss).
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
	v, err := s.parcels.TileVersion(ctx)
	if err != nil {
		return err
	}
	s.tileCache.Seen(v)
	sorted := slices.Clone(layers)
	slices.Sort(sorted)
	key := tilecache.Key{Z: z, X: x, Y: y, Layers: strings.Join(slices.Compact(sorted), ","), Weights: w.Version, Day: asOf.Format(time.DateOnly)}
	t, hit := s.tileCache.Get(v, clusterKey(key), key)
	if !hit {
		if t, err = s.makeTile(ctx, v, key, layers, w, asOf); err != nil {
			return err
		}
	}
	setTileHeaders(c, t.ETag)
	c.Header("X-Tile-Cache", map[bool]string{true: "hit", false: "miss"}[hit])
	switch {
	case etagMatches(c.GetHeader("If-None-Match"), t.ETag):
		c.Status(http.StatusNotModified)
	case t.Bytes == nil:
		c.Status(http.StatusNoContent)
	default:
		c.Header("Content-Length", strconv.Itoa(len(t.Bytes)))
		c.Data(http.StatusOK, "application/vnd.mapbox-vector-tile", t.Bytes)
	}
	return nil
}

// clusterKey is the key of key's tile when it is clusters past its cap:
// it depends on neither the weights nor the day (no score is in it).
func clusterKey(key tilecache.Key) tilecache.Key {
	key.Weights, key.Day = "", ""
	return key
}

// tileFlightKey names one flight of tiles: the tile and the version its
// requests read.
type tileFlightKey struct {
	version parcels.ReadModelVersion
	key     tilecache.Key
}

// tileFlights are the flights of tiles (made) and of their clusters
// (shared by the tiles that differ only in what clusters do not depend
// on: weights and day). Each runs detached from every request, under the
// route's statement timeout counted from its start.
type tileFlights struct {
	tiles    *tileflight.Group[tileFlightKey, tilecache.Tile]
	clusters *tileflight.Group[tileFlightKey, parcels.TileResult]
}

func newTileFlights() (tileFlights, error) {
	opts := tileflight.Options{
		Start: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return projections.WithStatementTimeout(ctx, tileStatementTimeout)
		},
		TimedOut: func(err error) bool {
			var de *domain.Error
			return errors.As(err, &de) && de.Code == "query_timeout"
		},
	}
	tiles, err := tileflight.New[tileFlightKey, tilecache.Tile](opts)
	if err != nil {
		return tileFlights{}, err
	}
	clusters, err := tileflight.New[tileFlightKey, parcels.TileResult](opts)
	return tileFlights{tiles: tiles, clusters: clusters}, err
}

// makeTile makes the tile of key (asked at version v) once for all the
// requests asking for it at the same time (tileFlights), in two steps
// with turns of their own (limits.go): its points, or the finding that
// it is to be clusters, in a point turn; its clusters in a cluster turn,
// once for every tile asking for them at the same time whatever its
// weights and day, so a flood of dense low-zoom tiles cannot hold the
// turns of the cheap ones. The tile is cached under the version it was
// made at (a load may have completed since v was read: it is then not
// cached), under its cluster key when it is clusters past its cap.
func (s *server) makeTile(ctx context.Context, v parcels.ReadModelVersion, key tilecache.Key, layers []string, w records.WeightTable, asOf time.Time) (tilecache.Tile, error) {
	t, err := s.tileFlight.tiles.Do(ctx, tileFlightKey{version: v, key: key}, func(ctx context.Context) (tilecache.Tile, error) {
		var r parcels.TileResult
		err := s.tilePoints.do(ctx, func() (err error) {
			r, err = s.parcels.TilePoints(ctx, key.Z, key.X, key.Y, layers, w, asOf)
			return err
		})
		points := r.Version
		if err == nil && r.Clusters {
			over := r.OverCap
			r, err = s.tileFlight.clusters.Do(ctx, tileFlightKey{version: v, key: clusterKey(key)}, func(ctx context.Context) (r parcels.TileResult, err error) {
				err = s.tileClusters.do(ctx, func() (err error) {
					r, err = s.parcels.TileClusters(ctx, key.Z, key.X, key.Y, layers)
					return err
				})
				return r, err
			})
			r.OverCap = over
		}
		if err != nil {
			return tilecache.Tile{}, err
		}
		k := key
		if r.OverCap {
			k = clusterKey(k)
		}
		t := tilecache.Tile{Bytes: r.Tile, ETag: tileETag(r.Version, r.Tile)}
		// Clusters made at another version than the points that called
		// for them (a load in between) are served, never filed: filed under
		// the cluster key, they would stand for every weights and day of a
		// tile that may no longer be over its cap.
		if r.Version == points {
			s.tileCache.Put(r.Version, k, t)
		}
		return t, nil
	})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return t, fmt.Errorf("waiting for a tile: %w (%w)", projections.QueryTimeout(tileStatementTimeout), err)
	}
	return t, err
}

// tileETag is the ETag of tile made at version v: the version (schema and
// position) and the first 12 bytes of the tile's SHA-256, in hex.
func tileETag(v parcels.ReadModelVersion, tile []byte) string {
	sum := sha256.Sum256(tile)
	return fmt.Sprintf(`"%d.%d-%s"`, v.Schema, v.Position, hex.EncodeToString(sum[:12]))
}

func setTileHeaders(c *gin.Context, etag string) {
	h := c.Writer.Header()
	h.Set("ETag", etag)
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
