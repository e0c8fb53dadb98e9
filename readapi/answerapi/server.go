package answerapi

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/accountweb"
	"github.com/arr-dev/arr/readapi/httpx"
)

//go:embed openapi/*.json
var openapiFiles embed.FS

// OpenAPI returns the answer OpenAPI document, assembled from openapi/*.json.
func OpenAPI() ([]byte, error) {
	sub, err := fs.Sub(openapiFiles, "openapi")
	if err != nil {
		return nil, err
	}
	return httpx.BuildOpenAPI(sub)
}

// New returns the answer service's HTTP handler over the application
// d.App, which must have been built for the answer role (Answers.Served
// set).
func New(d httpx.Deps) (http.Handler, error) {
	if d.App.Answers.Served == nil {
		return nil, errors.New("answer: the application has no served-answers recorder (build it for the answer role)")
	}
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Answer), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, TrustedProxies: d.TrustedProxies, OpenAPI: openapi, Fail: fail, MaxBodyBytes: 64 << 10, BodyTimeout: d.BodyTimeout,
		Tracer: d.Tracer,
		Health: func(ctx context.Context) (int, any) {
			code, base := d.BaseHealth(ctx, string(account.Answer))
			return code, healthReport{HealthReport: base, Synthesis: d.App.Answers.Synthesis}
		},
	})
	if err != nil {
		return nil, err
	}
	keyed := e.Group("/api/v1", httpx.KeyAuth(d.App.Queries.Identities, account.Answer, false, fail),
		d.Quota.Answer(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf))
	keyed.GET("/key", httpx.CurrentKey)
	if d.App.Now == nil {
		d.App.Now = time.Now
	}
	h := &handler{app: d.App, d: d, memo: newMemo(50000), resolved: newResolutions(50000), flight: newFlight()}
	keyed.GET("/answer", handle(h.get))
	keyed.POST("/answer", handle(h.post))
	// The Sonar-compatible route: the same key, quota and meter.
	sonar := e.Group("/v1", httpx.KeyAuth(d.App.Queries.Identities, account.Answer, false, fail),
		d.Quota.Answer(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf))
	sonar.POST("/chat/completions", handle(h.chat))
	// A research job is asked for once (counted as an answer call); its
	// status, events and cancel are free of the daily limit.
	j := &jobs{h: h, streams: &streamCount{n: map[uuid.UUID]int{}}}
	keyed.POST("/research", handle(j.create))
	free := e.Group("/api/v1/research", httpx.KeyAuth(d.App.Queries.Identities, account.Answer, false, fail))
	free.GET("/:id", handle(j.get))
	free.GET("/:id/events", handle(j.events))
	free.DELETE("/:id", handle(j.cancel))
	e.GET("/docs/:id", handle(docsHandler(d.App.Queries.AnswerDocs)))
	if err := accountweb.Mount(e, account.Answer, d); err != nil {
		return nil, err
	}
	return httpx.Serve(e), nil
}
