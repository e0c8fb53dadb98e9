package records

import (
	"fmt"
	"maps"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/projections"
)

// statementTimeouts are the statement timeouts of the routes that query
// the read models, by "METHOD path" as the OpenAPI document names them
// (each operation's x-statement-timeout-ms says the same; a test keeps
// them in step). Every query such a request runs is stopped by the
// server at its route's limit, and the request answers 503 query_timeout
// naming it (projections.Timed). Read-only.
var statementTimeouts = map[string]time.Duration{
	"GET /api/v1/parcels":                  5 * time.Second,
	"POST /api/v1/parcels/query":           10 * time.Second,
	"GET /api/v1/tiles/{z}/{x}/{y}.mvt":    5 * time.Second,
	"GET /api/v1/data-sources":             10 * time.Second,
	"GET /data-sources":                    10 * time.Second,
	"GET /api/v1/states":                   5 * time.Second,
	"GET /api/v1/counties":                 5 * time.Second,
	"GET /api/v1/records":                  10 * time.Second,
	"GET /api/v1/tax-sales":                10 * time.Second,
	"GET /api/v1/lenders":                  10 * time.Second,
	"GET /api/v1/lists":                    5 * time.Second,
	"GET /api/v1/lists/{list_id}/rows":     10 * time.Second,
	"GET /api/v1/signals/{id}":             5 * time.Second,
	"GET /api/v1/monitors":                 5 * time.Second,
	"GET /api/v1/monitors/{id}/deliveries": 5 * time.Second,
	"GET /map":                             5 * time.Second,
}

// StatementTimeouts returns the routes' statement timeouts, by "METHOD
// path" as the OpenAPI document names them.
func StatementTimeouts() map[string]time.Duration { return maps.Clone(statementTimeouts) }

// timeout runs the rest of the route under its statement timeout (see
// statementTimeouts); a route missing from the table is a programming
// error New reports.
func timeout(route string) gin.HandlerFunc {
	d := statementTimeouts[route]
	return func(c *gin.Context) {
		ctx, cancel := projections.WithStatementTimeout(c.Request.Context(), d)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// Concurrency of the costly routes per process: at most this many of
// their requests query at once, the others wait their turn within their
// statement timeout (and answer 503 query_timeout if it ends first), so
// that a burst of them leaves the database's cores, and at least half of
// the main pool's default 16 connections (shared with the other services
// in `arr up`), to every other request.
const (
	polygonSlots = 4
	tileSlots    = 4
)

// gate lets at most cap(slots) requests of a route run at once; a request
// that cannot get a slot before its context ends fails with
// projections.QueryTimeout of its limit.
func gate(slots chan struct{}) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := c.Request.Context()
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			d, _ := projections.StatementTimeoutOf(ctx)
			fail(c, fmt.Errorf("waiting for a turn of a costly route: %w", projections.QueryTimeout(d)))
			return
		}
		defer func() { <-slots }()
		c.Next()
	}
}
