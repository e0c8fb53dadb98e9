package gateway

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/accountweb"
	"github.com/arr-dev/arr/readapi/billingapi"
	"github.com/arr-dev/arr/readapi/gateway/messages"
	"github.com/arr-dev/arr/readapi/gateway/responses"
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

// The routes of chat completions and of the OpenAI Responses API.
const (
	completionsPath = "/v1/chat/completions"
	responsesPath   = "/v1/responses"
)

// New returns the gateway's HTTP handler over the application d.App,
// which must have been built for the gateway role (Completions and
// Embeddings set).
func New(d httpx.Deps, o Options) (http.Handler, error) {
	if d.App.Completions == nil {
		return nil, errors.New("gateway: the application has no completion use case (build it for the gateway role)")
	}
	if d.App.Embeddings == nil {
		return nil, errors.New("gateway: the application has no embeddings use case (build it for the gateway role)")
	}
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	comp := &completer{d: d, o: o, app: d.App}
	// The bytes of request bodies in flight are bounded, every route's
	// (bodies.go).
	bodies := httpx.NewBodyGate(o.BodyBytes, o.AccountBodyBytes, o.BodyWait)
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Gateway), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, TrustedProxies: d.TrustedProxies, OpenAPI: openapi, Fail: fail, MaxBodyBytes: maxBody, BodyTimeout: d.BodyTimeout, Bodies: bodies,
		Health: func(ctx context.Context) (int, any) { return comp.health(ctx) },
		Tracer: d.Tracer,
	})
	if err != nil {
		return nil, err
	}
	// Only completions (chat, Responses and Messages) and embeddings count
	// against the plan's daily limit and the usage meter; the other keyed
	// routes (key, usage, feedback) do not.
	// The counted routes' key look-up counts the request too, in its own
	// round trip (Quota.PrepareGateway).
	keyed := e.Group("/v1", httpx.KeyAuth(d.App.Queries.Identities, account.Gateway, false, fail), rateLimitHeaders)
	counted := e.Group("/v1", d.Quota.PrepareGateway(), httpx.KeyAuth(d.App.Queries.Identities, account.Gateway, false, fail), rateLimitHeaders)
	keyed.GET("/key", httpx.CurrentKey)
	keyed.GET("/guardrails", handle(comp.guardrails))
	counted.POST(strings.TrimPrefix(completionsPath, "/v1"), d.Quota.Gateway(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf), handle(comp.serve(chatCompletions{})))
	counted.POST(strings.TrimPrefix(responsesPath, "/v1"), d.Quota.Gateway(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf), handle(comp.serve(responses.Dialect{})))
	counted.POST(strings.TrimPrefix(embeddingsPath, "/v1"), d.Quota.Gateway(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf), handle(comp.embeddings))
	// The Messages API takes the key in x-api-key too (Anthropic's SDKs
	// and Claude Code send it there) and answers every error, these
	// middlewares' included, in Anthropic's shape (fail).
	anthropic := e.Group("/v1", httpx.KeyAuth(d.App.Queries.Identities, account.Gateway, true, fail), rateLimitHeaders)
	anthropicCounted := e.Group("/v1", d.Quota.PrepareGateway(), httpx.KeyAuth(d.App.Queries.Identities, account.Gateway, true, fail), rateLimitHeaders)
	anthropicCounted.POST(strings.TrimPrefix(messagesPath, "/v1"), d.Quota.Gateway(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf), handle(comp.serve(messages.Dialect{})))
	anthropic.POST(strings.TrimPrefix(countTokensPath, "/v1"), handle(comp.countTokens))
	keyed.GET("/usage", handle(comp.usageReport))
	keyed.POST("/feedback", handle(comp.feedback))
	e.GET("/v1/models", handle(comp.models))
	e.GET("/v1/audit/:hash", httpx.OptionalKeyAuth(d.App.Queries.Identities, account.Gateway, false, fail), handle(comp.auditEntry))
	if err := accountweb.Mount(e, account.Gateway, d); err != nil {
		return nil, err
	}
	mountMe(e, d)
	e.GET("/v1/plans", plans)
	mountLog(e, d.App.Queries.Log, d.Quota.PublicPerIP(account.Gateway, fail))
	bill, err := billingapi.New(billingapi.Config{Billing: d.App.Billing, Identities: d.App.Queries.Identities, AdminKey: o.AdminKey, Logger: d.Logger})
	if err != nil {
		return nil, err
	}
	billingapi.Register(e, d, bill, fail)
	return httpx.Serve(e), nil
}
