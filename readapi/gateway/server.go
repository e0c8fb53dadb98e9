package gateway

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

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

// completionsPath is the route of chat completions.
const completionsPath = "/v1/chat/completions"

// New returns the gateway's HTTP handler without routing configured (every
// route is there; completions answer 503). Servers use NewWithRouting.
func New(d httpx.Deps) (http.Handler, error) { return NewWithRouting(d, Routing{}) }

// NewWithRouting returns the gateway's HTTP handler.
func NewWithRouting(d httpx.Deps, rt Routing) (http.Handler, error) {
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	comp := &completer{d: d, rt: rt}
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Gateway), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, TrustedProxies: d.TrustedProxies, OpenAPI: openapi, Fail: fail, MaxBodyBytes: 4 << 20, BodyTimeout: d.BodyTimeout,
		Health: func(ctx context.Context) (int, any) { return comp.health(ctx) },
	})
	if err != nil {
		return nil, err
	}
	// Only completions (chat and Responses) count against the plan's daily
	// limit and the usage meter; the other keyed routes (key, usage,
	// feedback) do not.
	keyed := e.Group("/v1", httpx.KeyAuth(d.App.Queries.Identities, account.Gateway, false, fail))
	keyed.GET("/key", httpx.CurrentKey)
	keyed.POST(strings.TrimPrefix(completionsPath, "/v1"), d.Quota.Gateway(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf), handle(comp.handle))
	keyed.POST(strings.TrimPrefix(responsesPath, "/v1"), d.Quota.Gateway(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf), handle(comp.handleResponses))
	keyed.GET("/usage", handle(comp.usageReport))
	keyed.POST("/feedback", handle(comp.feedback))
	e.GET("/v1/models", handle(comp.models))
	e.GET("/v1/audit/:hash", httpx.OptionalKeyAuth(d.App.Queries.Identities, account.Gateway, false, fail), handle(comp.auditEntry))
	if err := accountweb.Mount(e, account.Gateway, d); err != nil {
		return nil, err
	}
	mountMe(e, d)
	e.GET("/v1/plans", plans)
	mountLog(e, rt.Log, d.Quota.PublicPerIP(account.Gateway, fail))
	billing.Register(e, d, fail)
	return e, nil
}
