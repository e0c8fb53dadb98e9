package recordsapi

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/readapi/accountweb"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/recordsapi/cursor"
	"github.com/arr-dev/arr/readapi/recordsapi/tilecache"
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

// writeTimeout is how long any records answer may take to be written from
// its first byte (httpx.Base.WriteTimeout): the largest, a 1,000-parcel
// page or a capped tile, is a few megabytes at most, written in well under
// a second to a client that reads; one that does not read is cut off.
const writeTimeout = 30 * time.Second

// server holds the handlers' dependencies.
type server struct {
	d       httpx.Deps
	parcels app.Parcels
	lists   app.Lists
	gaz     *records.Gazetteer
	mapTmpl *template.Template
	cursors *cursor.Codec
	// polygons, tilePoints and tileClusters are the turns of the costly
	// routes (limits.go).
	polygons, tilePoints, tileClusters *turns
	// exports admits the bulk exports (exportgate.go); temps are their
	// temporary GeoPackages (exporttemp.go).
	exports *exportGate
	temps   *exportTemps
	// tileCache holds made tiles, tileFlight makes each once for the
	// requests asking at the same time, and clusters once for the tiles
	// that share them (tiles.go).
	tileCache  *tilecache.Cache
	tileFlight tileFlights
}

// New returns the records service's HTTP handler over the application
// d.App (its Gazetteer is required; without Queries.Contacts, contact
// columns answer 503).
func New(d httpx.Deps) (http.Handler, error) {
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	gaz := d.App.Queries.Gazetteer
	if gaz == nil {
		return nil, errors.New("records: no gazetteer")
	}
	mapTmpl, err := template.ParseFS(templateFiles, "templates/map.html")
	if err != nil {
		return nil, err
	}
	cursors, err := cursor.New(d.App.CursorKey)
	if err != nil {
		return nil, fmt.Errorf("records: the cursor key: %w", err)
	}
	s := &server{d: d, parcels: d.App.Queries.Parcels, lists: d.App.Queries.Lists, gaz: gaz, mapTmpl: mapTmpl, cursors: cursors,
		polygons: newTurns(polygonSlots), tilePoints: newTurns(tilePointSlots), tileClusters: newTurns(tileClusterSlots),
		exports: newExportGate(exportSlots), temps: newExportTemps(os.TempDir()), tileCache: tilecache.New(tileCacheBytes)}
	if s.tileFlight, err = newTileFlights(); err != nil {
		return nil, err
	}
	s.temps.sweepAtStart(d.Logger)

	ids := d.App.Queries.Identities
	// The public routes need no key, but take one: a key that is sent must
	// be valid (401 otherwise), and the request is then counted against
	// the key's hourly quota (and metered) like a keyed route; a request
	// without a key is counted per client IP, apart from every key.
	public := []gin.HandlerFunc{httpx.OptionalKeyAuth(ids, account.Records, true, fail),
		d.Quota.RecordsPublic(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf)}
	e, err := httpx.NewEngine(httpx.Base{
		Service: string(account.Records), Version: d.Version, Logger: d.Logger, Metrics: d.Metrics,
		Gatherer: d.Gatherer, TrustedProxies: d.TrustedProxies, OpenAPI: openapi, Fail: fail, MaxBodyBytes: 4 << 20,
		BodyTimeout: d.BodyTimeout, WriteTimeout: writeTimeout, Public: public,
		Tracer: d.Tracer,
		Health: func(ctx context.Context) (int, any) { return d.BaseHealth(ctx, string(account.Records)) },
	})
	if err != nil {
		return nil, err
	}
	// Every route below runs under its statement timeout (limits.go).
	e.Use(statementTimeout())
	// Every JSON route takes only the query parameters it documents, each
	// once (httpx.CheckQuery).
	params := func(names ...string) gin.HandlerFunc { return httpx.Query(fail, names...) }
	placed := []string{"limit", "offset", "state", "county"}
	keyed := e.Group("/api/v1", httpx.KeyAuth(ids, account.Records, true, fail),
		d.Quota.Records(httpx.PrincipalOf, fail), d.Meter.Middleware(httpx.PrincipalOf))
	keyed.GET("/key", params(), httpx.CurrentKey)
	keyed.GET("/lists", params(), handle(s.listLists))
	keyed.GET("/monitors", params("limit", "offset", "deleted"), handle(s.listMonitors))
	keyed.GET("/monitors/:id/deliveries", params("limit", "offset", "status"), handle(s.listDeliveries))
	keyed.GET("/lists/:list_id/match", params(), handle(s.listMatch))
	keyed.GET("/lists/:list_id/rows", params("limit", "offset", "signals", "include_contact", "weights", "as_of"), handle(s.listRows))
	keyed.GET("/signals/:id", params("weights", "as_of", "county"), handle(s.signals))
	keyed.GET("/exports/parcels", params("county", "format", "layers"), handle(s.exportParcels))
	if err := accountweb.Mount(e, account.Records, d); err != nil {
		return nil, err
	}
	if err := s.mountAccountLists(e); err != nil {
		return nil, err
	}
	// Key-less /api/v1 routes go on public.
	pub := e.Group("/api/v1", public...)
	pub.GET("", params(), s.index)
	pub.GET("/parcels", params("bbox", "near", "radius_m", "address", "apn", "county", "layers", "limit", "cursor"), handle(s.parcelsSearch))
	pub.POST("/parcels/query", params(), handle(s.parcelsInPolygon))
	pub.GET("/tiles/:z/:x/:y", params("layers", "weights", "as_of"), handle(s.tile))
	pub.HEAD("/tiles/:z/:x/:y", params("layers", "weights", "as_of"), handle(s.tile))
	pub.GET("/data-sources", params(), handle(s.dataSources))
	pub.GET("/layers", params(), s.layers)
	pub.GET("/weights", params(), s.weights)
	pub.GET("/states", params("limit", "offset"), handle(s.states))
	pub.GET("/counties", params(placed...), handle(s.counties))
	pub.GET("/records", params(append(placed, "layer")...), handle(s.records))
	pub.GET("/tax-sales", params(placed...), handle(s.taxSales))
	pub.GET("/lenders", params(placed...), handle(s.lenders))
	// The OGC API – Features (ogc.go).
	if err := s.mountOGC(pub, d.App.Queries.Features, openapi); err != nil {
		return nil, err
	}
	e.GET("/data-sources", append(public, handle(s.dataSourcesPage))...)
	e.GET("/map", append(public, params("lon", "lat", "zoom"), handle(s.mapPage))...)
	// The page's static files are not counted.
	e.GET(mapAssetsPath+"/:file", s.mapAsset)
	return httpx.Serve(e), nil
}
