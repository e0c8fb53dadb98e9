package recordsapi

import (
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
)

//go:embed mapassets/*.js mapassets/*.css mapassets/*.txt
var mapAssets embed.FS

// mapAssetsPath is where the map page's assets are served.
const mapAssetsPath = "/map/assets"

// mapView is where the map opens without lon, lat and zoom when the read
// model holds no parcel with a point: Baltimore City.
var mapView = struct{ lon, lat, zoom float64 }{-76.62, 39.29, 12}

// mapConfig is what the page's script reads (the map-config element).
type mapConfig struct {
	Tiles       string  `json:"tiles"`
	API         string  `json:"api"`
	Assets      string  `json:"assets"`
	MinZoom     int     `json:"minzoom"`
	Lon         float64 `json:"lon"`
	Lat         float64 `json:"lat"`
	Zoom        float64 `json:"zoom"`
	Basemap     string  `json:"basemap,omitempty"`
	Attribution string  `json:"attribution,omitempty"`
	Weights     string  `json:"weights"`
}

// mapPage is GET /map: a map of the parcels (MapLibre GL JS, served from
// the binary) from the vector tiles, coloured by signal; a click shows the
// parcel's signal report. lon, lat and zoom set the view (default: a
// parcel of the read model, else Baltimore City); the base map is
// ARR_MAP_BASEMAP_URL's raster tiles, none when unset.
func (s *server) mapPage(c *gin.Context) error {
	cfg := mapConfig{Tiles: "/api/v1/tiles/{z}/{x}/{y}.mvt", API: "/api/v1", Assets: mapAssetsPath, MinZoom: minTileZoom,
		Basemap: s.d.App.Map.BasemapURL, Attribution: s.d.App.Map.Attribution, Weights: records.DefaultWeightsVersion}
	cfg.Lon, cfg.Lat, cfg.Zoom = mapView.lon, mapView.lat, mapView.zoom
	if lon, lat, ok := s.parcels.Centre(c.Request.Context()); ok {
		cfg.Lon, cfg.Lat = lon, lat
	}
	for _, p := range []struct {
		name   string
		dst    *float64
		lo, hi float64
	}{{"lon", &cfg.Lon, -180, 180}, {"lat", &cfg.Lat, -85, 85}, {"zoom", &cfg.Zoom, 0, 22}} {
		v, ok := c.GetQuery(p.name)
		if !ok {
			continue
		}
		f, ok := records.ParseDecimal(v)
		if !ok || f < p.lo || f > p.hi {
			return domain.Invalid("invalid_"+p.name, p.name, "%s must be a decimal number from %g to %g; got %q", p.name, p.lo, p.hi, v)
		}
		*p.dst = f
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	csp := "default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data: blob:"
	if origin := basemapOrigin(cfg.Basemap); origin != "" {
		csp = strings.Replace(csp, "connect-src 'self'", "connect-src 'self' "+origin, 1)
		csp = strings.Replace(csp, "img-src 'self'", "img-src 'self' "+origin, 1)
	}
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	c.Status(http.StatusOK)
	h.Set("Content-Type", "text/html; charset=utf-8")
	return s.mapTmpl.Execute(c.Writer, map[string]any{"Assets": mapAssetsPath, "MinZoom": minTileZoom,
		"Basemap": cfg.Basemap != "", "Config": template.JS(conf)})
}

// basemapOrigin is the scheme and host of a base map URL template, for the
// page's Content-Security-Policy; "" when there is none.
func basemapOrigin(tmpl string) string {
	if tmpl == "" {
		return ""
	}
	u, err := url.Parse(strings.NewReplacer("{z}", "0", "{x}", "0", "{y}", "0").Replace(tmpl))
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// mapAsset is GET /map/assets/{file}: the page's script, styles and the
// MapLibre GL JS build, from the binary.
func (s *server) mapAsset(c *gin.Context) {
	name := path.Base(c.Param("file"))
	b, err := mapAssets.ReadFile("mapassets/" + name)
	if err != nil {
		c.Status(http.StatusNotFound)
		return
	}
	ct := "text/plain; charset=utf-8"
	switch path.Ext(name) {
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".css":
		ct = "text/css; charset=utf-8"
	}
	c.Header("Cache-Control", "public, max-age=3600")
	c.Data(http.StatusOK, ct, b)
}
