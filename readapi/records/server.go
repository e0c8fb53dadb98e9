package records

import (
	"context"
	"embed"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/accountweb"
	"github.com/arr-dev/arr/readapi/httpx"
)

//go:embed openapi/*.json
var openapiFiles embed.FS

// OpenAPI returns the records OpenAPI document, assembled from openapi/*.json.
func OpenAPI() ([]byte, error) {
	sub, err := fs.Sub(openapiFiles, "openapi")
	if err != nil {
		return nil, err
	}
	return httpx.BuildOpenAPI(sub)
}

// New returns the records service's HTTP handler.
func New(d httpx.Deps) (http.Handler, error) {
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	// Key-less requests are counted per client IP, apart from every key's quota.
	perIP := d.Quota.PublicPerIP(fail)
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Records), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, OpenAPI: openapi, Fail: fail, MaxBodyBytes: 1 << 20, Public: []gin.HandlerFunc{perIP},
		Health: func(ctx context.Context) (int, any) { return d.BaseHealth(ctx, string(account.Records)) },
	})
	if err != nil {
		return nil, err
	}
	keyed := e.Group("/api/v1", httpx.KeyAuth(d.Identities, account.Records, true, fail),
		d.Quota.Records(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf))
	keyed.GET("/key", httpx.CurrentKey)
	if err := accountweb.Mount(e, account.Records, d); err != nil {
		return nil, err
	}
	// Key-less /api/v1 routes go on public, under the per-IP limit.
	public := e.Group("/api/v1", perIP)
	_ = public
	return e, nil
}
