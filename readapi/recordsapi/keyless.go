package recordsapi

import (
	"net/http"
	"strings"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/records"
)

// index is GET /api/v1: the key-less API's resources.
func (s *server) index(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{
		"object":  "index",
		"version": "v1",
		"resources": gin.H{
			"parcels":      "/api/v1/parcels?bbox=west,south,east,north&layers=a,b",
			"data_sources": "/api/v1/data-sources",
			"layers":       "/api/v1/layers",
			"weights":      "/api/v1/weights",
			"states":       "/api/v1/states",
			"counties":     "/api/v1/counties?state=MD",
			"records":      "/api/v1/records?state=&county=&layer=",
			"tax_sales":    "/api/v1/tax-sales?state=&county=",
			"lenders":      "/api/v1/lenders?state=&county=",
		},
		"keyed": gin.H{
			"lists":      "/api/v1/lists",
			"list_rows":  "/api/v1/lists/{list_id}/rows?limit=&offset=&signals=1&include_contact=1",
			"list_match": "/api/v1/lists/{list_id}/match",
			"signals":    "/api/v1/signals/{lead_id or apn}",
		},
		"documentation": "/openapi.json",
		"data_sources":  "/data-sources",
	})
}

// layers is GET /api/v1/layers: every layer key with its meaning.
func (s *server) layers(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": records.Layers()})
}

// weights is GET /api/v1/weights: every published weights version.
func (s *server) weights(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"object": "list", "default_version": records.DefaultWeightsVersion, "data": records.WeightTables()})
}

type stateOut struct {
	records.State
	Counties        int      `json:"counties"`
	CountiesCovered int      `json:"counties_covered"`
	SourceURL       string   `json:"source_url"`
	Layers          []string `json:"layers"`
}

// states is GET /api/v1/states.
func (s *server) states(c *gin.Context) error {
	limit, offset, err := page(c)
	if err != nil {
		return err
	}
	cov, err := s.parcels.CountiesCovered(c.Request.Context())
	if err != nil {
		return err
	}
	all := make([]stateOut, 0, len(s.gaz.States))
	for _, st := range s.gaz.States {
		o := stateOut{State: st, SourceURL: s.gaz.SourceURL, Layers: []string{}}
		seen := map[string]bool{}
		for _, ct := range s.gaz.Counties {
			if strings.HasPrefix(ct.FIPS, st.FIPS) {
				o.Counties++
				if ls, ok := cov[ct.FIPS]; ok {
					o.CountiesCovered++
					for _, l := range ls {
						if !seen[l] {
							seen[l] = true
							o.Layers = append(o.Layers, l)
						}
					}
				}
			}
		}
		all = append(all, o)
	}
	c.JSON(http.StatusOK, pageOf(all, limit, offset))
	return nil
}

type countyOut struct {
	records.County
	StateFIPS string   `json:"state_fips"`
	Layers    []string `json:"layers"`
	SourceURL string   `json:"source_url"`
}

// counties is GET /api/v1/counties?state=&county=.
func (s *server) counties(c *gin.Context) error {
	limit, offset, err := page(c)
	if err != nil {
		return err
	}
	prefix, err := s.place(c)
	if err != nil {
		return err
	}
	cov, err := s.parcels.CountiesCovered(c.Request.Context())
	if err != nil {
		return err
	}
	all := []countyOut{}
	for _, ct := range s.gaz.Counties {
		if strings.HasPrefix(ct.FIPS, prefix) {
			ls := cov[ct.FIPS]
			if ls == nil {
				ls = []string{}
			}
			all = append(all, countyOut{County: ct, StateFIPS: ct.FIPS[:2], Layers: ls, SourceURL: s.gaz.SourceURL})
		}
	}
	c.JSON(http.StatusOK, pageOf(all, limit, offset))
	return nil
}

func pageOf[T any](all []T, limit, offset int) gin.H {
	total := len(all)
	lo, hi := min(offset, total), min(offset+limit, total)
	return gin.H{"object": "list", "data": all[lo:hi], "total": total, "limit": limit, "offset": offset}
}

func (s *server) recordsOf(c *gin.Context, layer string) error {
	limit, offset, err := page(c)
	if err != nil {
		return err
	}
	prefix, err := s.place(c)
	if err != nil {
		return err
	}
	rs, total, err := s.parcels.Records(c.Request.Context(), parcels.RecordFilter{Layer: layer, CountyPrefix: prefix, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []parcels.Record{}
	}
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": rs, "total": total, "limit": limit, "offset": offset})
	return nil
}

// records is GET /api/v1/records?state=&county=&layer=.
func (s *server) records(c *gin.Context) error {
	layer := ""
	if v := c.Query("layer"); v != "" {
		l, err := records.ParseLayer(v)
		if err != nil {
			return err
		}
		layer = string(l)
	}
	return s.recordsOf(c, layer)
}

// taxSales is GET /api/v1/tax-sales: the tax_sale layer's records.
func (s *server) taxSales(c *gin.Context) error { return s.recordsOf(c, string(records.TaxSale)) }

// lenders is GET /api/v1/lenders: plaintiffs of the lis pendens layer.
func (s *server) lenders(c *gin.Context) error {
	limit, offset, err := page(c)
	if err != nil {
		return err
	}
	prefix, err := s.place(c)
	if err != nil {
		return err
	}
	ls, total, err := s.parcels.Lenders(c.Request.Context(), prefix, limit, offset)
	if err != nil {
		return err
	}
	if ls == nil {
		ls = []parcels.Lender{}
	}
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": ls, "total": total, "limit": limit, "offset": offset})
	return nil
}
