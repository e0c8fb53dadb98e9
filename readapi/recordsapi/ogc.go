package recordsapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
)

// ogcPrefix is where the OGC API – Features lives: its landing page.
const ogcPrefix = "/api/v1/ogc"

// Media types of the OGC API's answers.
const (
	geoJSON     = "application/geo+json"
	openAPIType = "application/vnd.oai.openapi+json;version=3.0"
	schemaJSON  = "application/schema+json"
)

// conformanceClasses are what the OGC API implements, and only that.
func conformanceClasses() []string {
	return []string{
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
		"http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
		"http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
		"http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
	}
}

// ogcAPI holds the OGC API's state: its read model, the collections, the
// extents cached by the read model's version, its OpenAPI document, the
// base of its links and the turns of filtered queries.
type ogcAPI struct {
	s           *server
	features    app.Features
	collections []parcels.Collection
	openapi     []byte
	// base is the landing page's absolute URL: the service's public base
	// URL (httpx.Site, ARR_PUBLIC_BASE_URL) and ogcPrefix. Links never
	// come from the request's Host.
	base string
	// filtered bounds the filtered items queries querying at once
	// (ogcFilterSlots): a filter or a datetime no index serves scans,
	// bounded by the route's statement timeout and the page's limit, and
	// at most this many such scans run per process.
	filtered *turns
	extents  *extentCache
}

// ogcFilterSlots is how many filtered OGC items queries run at once per
// process (the others wait their turn within their statement timeout).
const ogcFilterSlots = 4

// mountOGC mounts the OGC API on g (the public /api/v1 group).
func (s *server) mountOGC(g *gin.RouterGroup, f app.Features, doc []byte) error {
	if f == nil {
		return nil
	}
	o, err := s.newOGC(f, doc)
	if err != nil {
		return err
	}
	o.mount(g)
	return nil
}

// newOGC returns the OGC API over f, documented from doc. Its links are on
// the service's site, which must have a base URL.
func (s *server) newOGC(f app.Features, doc []byte) (*ogcAPI, error) {
	if s.d.Site.BaseURL() == "" {
		return nil, errors.New("records: the OGC API builds absolute links on the service's public base URL, and the service has none (httpx.Deps.Site)")
	}
	o := &ogcAPI{s: s, features: f, collections: parcels.Collections(), filtered: newTurns(ogcFilterSlots),
		base: s.d.Site.BaseURL() + ogcPrefix, extents: newExtentCache(f, s.d.Logger)}
	var err error
	if o.openapi, err = ogcOpenAPI(doc, o.collections); err != nil {
		return nil, err
	}
	return o, nil
}

// mount mounts o's routes on g.
func (o *ogcAPI) mount(g *gin.RouterGroup) {
	params := func(names ...string) gin.HandlerFunc { return httpx.Query(fail, names...) }
	r := g.Group("/ogc")
	r.GET("", params("f"), handle(o.landing))
	r.GET("/conformance", params("f"), handle(o.conformance))
	r.GET("/api", params("f"), handle(o.api))
	r.GET("/collections", params("f"), handle(o.listCollections))
	r.GET("/collections/:collectionId", params("f"), handle(o.collection))
	r.GET("/collections/:collectionId/queryables", params("f"), handle(o.queryables))
	r.GET("/collections/:collectionId/items", handle(o.items))
	r.GET("/collections/:collectionId/items/:featureId", params("f"), handle(o.item))
}

// link is a link of the OGC API's documents.
type link struct {
	Href  string `json:"href"`
	Rel   string `json:"rel"`
	Type  string `json:"type,omitempty"`
	Title string `json:"title,omitempty"`
}

// format checks the f parameter: json (geojson for features), or none.
func format(c *gin.Context, values ...string) error {
	f, ok := c.GetQuery("f")
	if !ok {
		return nil
	}
	for _, v := range values {
		if f == v {
			return nil
		}
	}
	return domain.Invalid("invalid_f", "f", "f must be %v or left out (JSON is the only encoding); got %q", values, f)
}

func (o *ogcAPI) landing(c *gin.Context) error {
	if err := format(c, "json"); err != nil {
		return err
	}
	b := o.base
	c.JSON(http.StatusOK, gin.H{
		"title":       "arr records: OGC API – Features",
		"description": "Public parcels and the data layers that name them (vacant notices, tax sales, code violations, ...), as GeoJSON features with CQL2 filtering. Never contact data.",
		"links": []link{
			{b, "self", "application/json", "this document"},
			{b + "/api", "service-desc", openAPIType, "the API definition"},
			{b + "/conformance", "conformance", "application/json", "the conformance classes implemented"},
			{b + "/collections", "data", "application/json", "the collections"},
		},
	})
	return nil
}

func (o *ogcAPI) conformance(c *gin.Context) error {
	if err := format(c, "json"); err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"conformsTo": conformanceClasses()})
	return nil
}

func (o *ogcAPI) api(c *gin.Context) error {
	if err := format(c, "json"); err != nil {
		return err
	}
	c.Data(http.StatusOK, openAPIType, o.openapi)
	return nil
}

// find returns the collection the path names.
func (o *ogcAPI) find(c *gin.Context) (parcels.Collection, error) {
	id := c.Param("collectionId")
	ids := make([]string, len(o.collections))
	for i, col := range o.collections {
		if col.ID == id {
			return col, nil
		}
		ids[i] = col.ID
	}
	return parcels.Collection{}, domain.NotFound("collection_not_found", "no collection %q; the collections are %v (GET %s/collections)", id, ids, ogcPrefix)
}

// extentsNow returns the collections' extents (extentCache.get).
func (o *ogcAPI) extentsNow(ctx context.Context) (map[string]parcels.Extent, error) {
	return o.extents.get(ctx)
}

// describe writes a collection's description; its extent is ex's
// collection's, left out when extents are not known yet (ex nil: the
// first scan has not ended, extentCache.get).
func (o *ogcAPI) describe(b string, col parcels.Collection, extents map[string]parcels.Extent) gin.H {
	self := b + "/collections/" + col.ID
	out := gin.H{
		"id": col.ID, "title": col.Title, "description": col.Description, "itemType": "feature",
		"crs": []string{"http://www.opengis.net/def/crs/OGC/1.3/CRS84"},
		"links": []link{
			{self, "self", "application/json", col.Title},
			{self + "/items", "items", geoJSON, col.Title + " as GeoJSON"},
			{self + "/queryables", "http://www.opengis.net/def/rel/ogc/1.0/queryables", schemaJSON, "the properties a filter may name"},
		},
	}
	if extents == nil {
		return out
	}
	ex := extents[col.ID]
	extent := gin.H{"spatial": gin.H{"bbox": [][4]float64{{-180, -90, 180, 90}}, "crs": "http://www.opengis.net/def/crs/OGC/1.3/CRS84"}}
	if ex.BBox != nil {
		extent["spatial"] = gin.H{"bbox": [][4]float64{*ex.BBox}, "crs": "http://www.opengis.net/def/crs/OGC/1.3/CRS84"}
	}
	if col.Temporal() {
		extent["temporal"] = gin.H{"interval": [][2]*string{{ex.From, ex.To}}, "trs": "http://www.opengis.net/def/uom/ISO-8601/0/Gregorian"}
	}
	out["extent"] = extent
	return out
}

func (o *ogcAPI) listCollections(c *gin.Context) error {
	if err := format(c, "json"); err != nil {
		return err
	}
	ex, err := o.extentsNow(c.Request.Context())
	if err != nil {
		return err
	}
	b := o.base
	out := make([]gin.H, len(o.collections))
	for i, col := range o.collections {
		out[i] = o.describe(b, col, ex)
	}
	c.JSON(http.StatusOK, gin.H{"collections": out, "links": []link{{b + "/collections", "self", "application/json", "the collections"}}})
	return nil
}

func (o *ogcAPI) collection(c *gin.Context) error {
	if err := format(c, "json"); err != nil {
		return err
	}
	col, err := o.find(c)
	if err != nil {
		return err
	}
	ex, err := o.extentsNow(c.Request.Context())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, o.describe(o.base, col, ex))
	return nil
}

// queryables is the collection's queryables as a JSON Schema (OGC API –
// Features – Part 3), served as application/schema+json to a client that
// asks for it and as application/json otherwise.
func (o *ogcAPI) queryables(c *gin.Context) error {
	if err := format(c, "json"); err != nil {
		return err
	}
	col, err := o.find(c)
	if err != nil {
		return err
	}
	props := gin.H{"geometry": gin.H{"format": "geometry-point", "description": "the parcel's point (WGS 84); bbox selects by it"}}
	for _, q := range col.Queryables {
		p := gin.H{"type": q.Type, "description": q.Description}
		if q.Format != "" {
			p["format"] = q.Format
		}
		props[q.Name] = p
	}
	b := o.base
	body := gin.H{
		"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": b + "/collections/" + col.ID + "/queryables",
		"type": "object", "title": col.Title, "properties": props, "additionalProperties": false,
	}
	ct := "application/json"
	if strings.Contains(c.GetHeader("Accept"), schemaJSON) {
		ct = schemaJSON
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, ct, raw)
	return nil
}
