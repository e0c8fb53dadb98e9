package records

import (
	"context"
	"embed"
	"html/template"
	"net/http"
	"sort"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/records"
)

//go:embed templates/*.html
var templateFiles embed.FS

type freshness struct {
	SourceDate string    `json:"source_date"`
	LastCrawl  time.Time `json:"last_crawl"`
	LoadedAt   time.Time `json:"loaded_at"`
	LoadID     string    `json:"load_id"`
	Loads      int       `json:"loads"`
}

type coverage struct {
	Counties     []countyRef `json:"counties"`
	ParcelsNamed int         `json:"parcels_named"`
}

type countyRef struct {
	FIPS  string `json:"fips"`
	Name  string `json:"name"`
	State string `json:"state"`
}

type gap struct {
	Gap   string `json:"gap"`
	Rows  int    `json:"rows"`
	About string `json:"about"`
}

type layerReport struct {
	records.LayerInfo
	Status    string     `json:"status"`
	Reason    *string    `json:"reason"`
	Freshness *freshness `json:"freshness"`
	Coverage  *coverage  `json:"coverage"`
	KnownGaps []gap      `json:"known_gaps"`
	Outlets   []string   `json:"outlets"`
}

type outlet struct {
	URL    string   `json:"url"`
	Layers []string `json:"layers"`
}

type dataSourceReport struct {
	Object      string        `json:"object"`
	GeneratedAt time.Time     `json:"generated_at"`
	Layers      []layerReport `json:"layers"`
	Outlets     []outlet      `json:"outlets"`
}

// report computes the data-source report now, from the tables that feed
// each layer.
func (s *server) report(ctx context.Context) (dataSourceReport, error) {
	states, err := s.parcels.LayerStates(ctx)
	if err != nil {
		return dataSourceReport{}, err
	}
	names := map[string]countyRef{}
	for _, c := range s.gaz.Counties {
		names[c.FIPS] = countyRef{FIPS: c.FIPS, Name: c.Name, State: c.State}
	}
	r := dataSourceReport{Object: "data_sources", GeneratedAt: time.Now().UTC(), Layers: []layerReport{}, Outlets: []outlet{}}
	byURL := map[string][]string{}
	for _, info := range records.Layers() {
		lr := layerReport{LayerInfo: info, Status: "not_loaded", KnownGaps: nil, Outlets: nil}
		st, ok := states[string(info.Key)]
		if !ok || st.LastLoadID == nil {
			why := "nothing has been loaded into this layer yet"
			if ok && st.FailedLoads > 0 {
				why = "every load of this layer failed; nothing of them is applied"
			}
			lr.Reason = &why
			r.Layers = append(r.Layers, lr)
			continue
		}
		lr.Status = "loaded"
		lr.Freshness = &freshness{SourceDate: *st.LastSourceDate, LastCrawl: st.LastCrawl.UTC(), LoadedAt: st.LastLoadedAt.UTC(), LoadID: *st.LastLoadID, Loads: st.Loads}
		cov := &coverage{ParcelsNamed: st.ParcelsNamed, Counties: []countyRef{}}
		for _, f := range st.Counties {
			ref, ok := names[f]
			if !ok {
				ref = countyRef{FIPS: f}
			}
			cov.Counties = append(cov.Counties, ref)
		}
		lr.Coverage = cov
		lr.KnownGaps = []gap{}
		if st.NamedNoGeometry > 0 {
			lr.KnownGaps = append(lr.KnownGaps, gap{Gap: "rows_without_coordinates", Rows: st.NamedNoGeometry,
				About: "parcels named by this layer without coordinates: found by APN and in lists, not by the bbox search"})
		}
		if st.RejectedLastLoad > 0 {
			lr.KnownGaps = append(lr.KnownGaps, gap{Gap: "rejected_rows", Rows: st.RejectedLastLoad,
				About: "rows of the latest load that could not be used (no or malformed parcel id, bad coordinates or dates); see the load's rejects report"})
		}
		if st.FailedLoads > 0 {
			lr.KnownGaps = append(lr.KnownGaps, gap{Gap: "failed_loads", Rows: st.FailedLoads, About: "loads that failed midway; none of their rows is applied"})
		}
		lr.Outlets = st.SourceURLs
		for _, u := range st.SourceURLs {
			byURL[u] = append(byURL[u], string(info.Key))
		}
		r.Layers = append(r.Layers, lr)
	}
	for u, ls := range byURL {
		r.Outlets = append(r.Outlets, outlet{URL: u, Layers: ls})
	}
	sort.Slice(r.Outlets, func(i, j int) bool { return r.Outlets[i].URL < r.Outlets[j].URL })
	return r, nil
}

// dataSources is GET /api/v1/data-sources.
func (s *server) dataSources(c *gin.Context) error {
	r, err := s.report(c.Request.Context())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, r)
	return nil
}

// dataSourcesPage is GET /data-sources: the same report as an HTML page.
func (s *server) dataSourcesPage(c *gin.Context) error {
	r, err := s.report(c.Request.Context())
	if err != nil {
		return err
	}
	t, err := template.ParseFS(templateFiles, "templates/data_sources.html")
	if err != nil {
		return err
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	c.Status(http.StatusOK)
	if err := t.Execute(c.Writer, r); err != nil {
		s.d.Logger.Warn("rendering the data-sources page", "err", err)
	}
	return nil
}
