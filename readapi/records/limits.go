package records

import (
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
