package gateway

import (
	"context"
	"embed"
	"io/fs"
	"net/http"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/accountweb"
	"github.com/arr-dev/arr/readapi/billing"
	"github.com/arr-dev/arr/readapi/httpx"
)

//go:embed openapi/*.json
var openapiFiles embed.FS

// OpenAPI returns the gateway OpenAPI document, assembled from openapi/*.json.
func OpenAPI() ([]byte, error) {
	sub, err := fs.Sub(openapiFiles, "openapi")
	if err != nil {
		return nil, err
	}
	return httpx.BuildOpenAPI(sub)
}

// New returns the gateway's HTTP handler.
func New(d httpx.Deps) (http.Handler, error) {
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Gateway), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, OpenAPI: openapi, Fail: fail, MaxBodyBytes: 4 << 20,
		Health: func(ctx context.Context) (int, any) { return billing.Health(ctx, d, string(account.Gateway)) },
	})
	if err != nil {
		return nil, err
	}
	keyed := e.Group("/v1", httpx.KeyAuth(d.Identities, account.Gateway, false, fail),
		d.Quota.Gateway(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf))
	keyed.GET("/key", httpx.CurrentKey)
	if err := accountweb.Mount(e, account.Gateway, d); err != nil {
		return nil, err
	}
	mountMe(e, d)
	e.GET("/v1/plans", plans)
	billing.Register(e, d, fail)
	return e, nil
}
