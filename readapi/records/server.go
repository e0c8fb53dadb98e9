package records

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/readapi/accountweb"
	"github.com/arr-dev/arr/readapi/app"
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

// Options are what the records service needs beyond the shared Deps.
type Options struct {
	// ContactKeys opens the contact columns of imported lists; nil answers
	// include_contact=1 with 503. The list upload is the ImportList
	// command of the Deps' application; nil turns it off (503).
	ContactKeys ContactKeys
	// Gazetteer names the states and counties (adapters/demodata loads the
	// shipped one); required.
	Gazetteer *records.Gazetteer
}

// New returns the records service's HTTP handler over gazetteer, without
// contact decryption or list upload (see NewServer).
func New(d httpx.Deps, gazetteer *records.Gazetteer) (http.Handler, error) {
	return NewServer(d, Options{Gazetteer: gazetteer})
}

// server holds the handlers' dependencies.
type server struct {
	d       httpx.Deps
	o       Options
	parcels app.Parcels
	lists   app.Lists
	gaz     *records.Gazetteer
}

// NewServer returns the records service's HTTP handler.
func NewServer(d httpx.Deps, o Options) (http.Handler, error) {
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	gaz := o.Gazetteer
	if gaz == nil {
		return nil, errors.New("records: no gazetteer")
	}
	s := &server{d: d, o: o, parcels: d.App.Queries.Parcels, lists: d.App.Queries.Lists, gaz: gaz}
	// Key-less requests are counted per client IP, apart from every key's quota.
	perIP := d.Quota.PublicPerIP(fail)
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Records), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, TrustedProxies: d.TrustedProxies, OpenAPI: openapi, Fail: fail, MaxBodyBytes: 4 << 20, Public: []gin.HandlerFunc{perIP},
		Health: func(ctx context.Context) (int, any) { return d.BaseHealth(ctx, string(account.Records)) },
	})
	if err != nil {
		return nil, err
	}
	keyed := e.Group("/api/v1", httpx.KeyAuth(d.App.Queries.Identities, account.Records, true, fail),
		d.Quota.Records(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf))
	keyed.GET("/key", httpx.CurrentKey)
	keyed.GET("/lists", handle(s.listLists))
	keyed.GET("/lists/:list_id/rows", handle(s.listRows))
	keyed.GET("/signals/:id", handle(s.signals))
	if err := accountweb.Mount(e, account.Records, d); err != nil {
		return nil, err
	}
	if err := s.mountAccountLists(e); err != nil {
		return nil, err
	}
	// Key-less /api/v1 routes go on public, under the per-IP limit.
	public := e.Group("/api/v1", perIP)
	public.GET("", s.index)
	public.GET("/parcels", handle(s.parcelsInBBox))
	public.GET("/data-sources", handle(s.dataSources))
	public.GET("/layers", s.layers)
	public.GET("/weights", s.weights)
	public.GET("/states", handle(s.states))
	public.GET("/counties", handle(s.counties))
	public.GET("/records", handle(s.records))
	public.GET("/tax-sales", handle(s.taxSales))
	public.GET("/lenders", handle(s.lenders))
	e.GET("/data-sources", perIP, handle(s.dataSourcesPage))
	return e, nil
}
