package answer

import (
	"context"
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

//go:embed openapi.json
var openapi []byte

// OpenAPI returns the answer service's OpenAPI document.
func OpenAPI() []byte { return openapi }

// New returns the answer service's HTTP handler.
func New(d httpx.Deps) (http.Handler, error) {
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Answer), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, OpenAPI: openapi, Fail: fail, MaxBodyBytes: 64 << 10,
		Health: func(ctx context.Context) (int, any) { return d.BaseHealth(ctx, string(account.Answer)) },
	})
	if err != nil {
		return nil, err
	}
	keyed := e.Group("/api/v1", httpx.KeyAuth(d.Identities, account.Answer, false, fail))
	keyed.GET("/key", currentKey)
	return e, nil
}

// currentKey answers GET /api/v1/key: the key the request was made with.
func currentKey(c *gin.Context) {
	p, _ := httpx.PrincipalOf(c)
	c.JSON(http.StatusOK, httpx.KeyObject(p))
}
