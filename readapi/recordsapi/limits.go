package recordsapi

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/projections"
)

// statementTimeouts are the statement timeouts of the routes that have
// their own, by "METHOD path" as the OpenAPI document names them; every
// other route of the service runs under defaultStatementTimeout. Each
// operation's x-statement-timeout-ms says which (a test keeps them in
// step). Every query a request runs is stopped at its route's limit (by
// the server itself on the read models, projections.Timed; by the
// context's deadline elsewhere), and the request answers 503
// query_timeout naming it. Read-only.
var statementTimeouts = map[string]time.Duration{
	"GET /api/v1/parcels":                              5 * time.Second,
	"POST /api/v1/parcels/query":                       10 * time.Second,
	"GET /api/v1/tiles/{z}/{x}/{y}.mvt":                tileStatementTimeout,
	"HEAD /api/v1/tiles/{z}/{x}/{y}.mvt":               tileStatementTimeout,
	"GET /api/v1/data-sources":                         10 * time.Second,
	"GET /data-sources":                                10 * time.Second,
	"GET /api/v1/states":                               5 * time.Second,
	"GET /api/v1/counties":                             5 * time.Second,
	"GET /api/v1/records":                              10 * time.Second,
	"GET /api/v1/tax-sales":                            10 * time.Second,
	"GET /api/v1/lenders":                              10 * time.Second,
	"GET /api/v1/lists":                                5 * time.Second,
	"GET /api/v1/lists/{list_id}/rows":                 10 * time.Second,
	"GET /api/v1/lists/{list_id}/match":                10 * time.Second,
	"GET /api/v1/signals/{id}":                         5 * time.Second,
	"GET /api/v1/monitors":                             5 * time.Second,
	"GET /api/v1/monitors/{id}/deliveries":             5 * time.Second,
	"GET /map":                                         5 * time.Second,
	"GET /api/v1/ogc/collections":                      10 * time.Second,
	"GET /api/v1/ogc/collections/{collectionId}":       10 * time.Second,
	"GET /api/v1/ogc/collections/{collectionId}/items": 10 * time.Second,
	"POST /account/lists":                              30 * time.Second,
	"POST /account/monitors":                           10 * time.Second,
	exportRoute:                                        10 * time.Second,
}

// tileStatementTimeout is the tiles' statement timeout (GET and HEAD),
// and the time limit of a flight of tiles from its start (tiles.go).
const tileStatementTimeout = 5 * time.Second

// totalLimits are the routes that stream an answer for longer than any
// one of their queries may take: their context lives for the route's
// total time limit instead of its statement timeout, and each query they
// run is stopped at the route's statement timeout by the server, in the
// transaction that runs it (parcels.Export sets it there). Read-only.
var totalLimits = map[string]time.Duration{
	exportRoute: exportTimeLimit,
}

// DefaultStatementTimeout is the statement timeout of every records route
// that has none of its own in statementTimeouts (the account pages, the
// index, the key, the static files): no request of the service runs an
// untimed query.
const DefaultStatementTimeout = 5 * time.Second

// StatementTimeouts returns the routes' own statement timeouts, by
// "METHOD path" as the OpenAPI document names them; every other route
// has DefaultStatementTimeout.
func StatementTimeouts() map[string]time.Duration { return maps.Clone(statementTimeouts) }

// statementTimeout runs every request of the engine under its route's
// statement timeout (statementTimeouts, or DefaultStatementTimeout), so no
// route can be mounted untimed. The route is the one gin matched
// (c.FullPath), written as the OpenAPI document writes it.
func statementTimeout() gin.HandlerFunc {
	byRoute := make(map[string]time.Duration, len(statementTimeouts))
	for route, d := range statementTimeouts {
		byRoute[ginRoute(route)] = d
	}
	total := make(map[string]time.Duration, len(totalLimits))
	for route, d := range totalLimits {
		total[ginRoute(route)] = d
	}
	return func(c *gin.Context) {
		if d, ok := total[c.Request.Method+" "+c.FullPath()]; ok {
			ctx, cancel := context.WithTimeout(c.Request.Context(), d)
			defer cancel()
			c.Request = c.Request.WithContext(ctx)
			c.Next()
			return
		}
		d, ok := byRoute[c.Request.Method+" "+c.FullPath()]
		if !ok {
			d = DefaultStatementTimeout
		}
		ctx, cancel := projections.WithStatementTimeout(c.Request.Context(), d)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// openAPIParam is a path parameter as the OpenAPI document writes it,
// with the suffix a route's last segment may add ({y}.mvt).
var openAPIParam = regexp.MustCompile(`\{(\w+)\}(\.\w+)?`)

// ginRoute writes "METHOD /a/{b}/{c}.mvt" as gin's route "METHOD /a/:b/:c".
func ginRoute(route string) string { return openAPIParam.ReplaceAllString(route, ":$1") }

// Concurrency of the costly routes per process: at most this many of
// their requests query at once, the others wait their turn within their
// statement timeout (and answer 503 query_timeout if it ends first). A
// tile is made in two steps with turns of their own: its points (or the
// count that finds it is to be clusters, a few thousand rows at most) in
// one of tilePointSlots, its clusters (every parcel of a dense low-zoom
// tile) in one of tileClusterSlots, so a flood of dense z10 tiles holds
// the cluster turns and waits there, while point tiles still get theirs.
// Together the costly routes hold at most 10 of the main pool's default
// 16 connections (shared with the other services in `arr up`), and the
// database's cores, leaving the rest to every other request.
const (
	polygonSlots     = 4
	tilePointSlots   = 4
	tileClusterSlots = 2
)

// turns lets at most cap(slots) requests of a costly route query at
// once. A turn covers the database work alone: a request takes it once
// it is entirely received (its body read, bounded, under the body
// deadline, and checked) and gives it back as soon as its query has
// returned, before its answer is built and written; so a client that
// sends slowly or reads slowly holds no turn, only its own connection
// (until the body timeout or Base.WriteTimeout ends it).
type turns struct{ slots chan struct{} }

func newTurns(n int) *turns { return &turns{slots: make(chan struct{}, n)} }

// do runs query in a turn. A request that cannot get one before its
// context ends fails with projections.QueryTimeout of its limit; the
// handler returns it, and the one respond path (httpx.Handle) answers
// it, logging a client's hang-up as 499.
func (t *turns) do(ctx context.Context, query func() error) error {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		d, _ := projections.StatementTimeoutOf(ctx)
		return fmt.Errorf("waiting for a turn of a costly route: %w", projections.QueryTimeout(d))
	}
	defer func() { <-t.slots }()
	return query()
}
