package parcels

import (
	"context"
	"sort"
	"time"

	"github.com/arr-dev/arr/domain/records"
)

// Freshness is when a layer's latest load was read and applied.
type Freshness struct {
	SourceDate string    `json:"source_date"`
	LastCrawl  time.Time `json:"last_crawl"`
	LoadedAt   time.Time `json:"loaded_at"`
	LoadID     string    `json:"load_id"`
	Loads      int       `json:"loads"`
}

// Coverage is the counties a layer covers and the parcels it names.
type Coverage struct {
	Counties     []CountyRef `json:"counties"`
	ParcelsNamed int         `json:"parcels_named"`
}

// CountyRef names a county.
type CountyRef struct {
	FIPS  string `json:"fips"`
	Name  string `json:"name"`
	State string `json:"state"`
}

// Gap is a known gap in a layer: rows it cannot offer, and why.
type Gap struct {
	Gap   string `json:"gap"`
	Rows  int    `json:"rows"`
	About string `json:"about"`
}

// LayerReport is one layer in the data-source report.
type LayerReport struct {
	records.LayerInfo
	Status    string     `json:"status"`
	Reason    *string    `json:"reason"`
	Freshness *Freshness `json:"freshness"`
	Coverage  *Coverage  `json:"coverage"`
	KnownGaps []Gap      `json:"known_gaps"`
	Outlets   []string   `json:"outlets"`
}

// Outlet is a source URL and the layers read from it.
type Outlet struct {
	URL    string   `json:"url"`
	Layers []string `json:"layers"`
}

// DataSourceReport is what GET /api/v1/data-sources answers.
type DataSourceReport struct {
	Object      string        `json:"object"`
	GeneratedAt time.Time     `json:"generated_at"`
	Layers      []LayerReport `json:"layers"`
	Outlets     []Outlet      `json:"outlets"`
}

// DataSources reports, as of now, what each layer holds: whether it is
// loaded, how fresh, which counties it covers (named by gaz), its known
// gaps and the outlets it was read from (GET /api/v1/data-sources).
func (q *Queries) DataSources(ctx context.Context, gaz *records.Gazetteer, now time.Time) (DataSourceReport, error) {
	states, err := q.LayerStates(ctx)
	if err != nil {
		return DataSourceReport{}, err
	}
	names := map[string]CountyRef{}
	for _, c := range gaz.Counties {
		names[c.FIPS] = CountyRef{FIPS: c.FIPS, Name: c.Name, State: c.State}
	}
	r := DataSourceReport{Object: "data_sources", GeneratedAt: now.UTC(), Layers: []LayerReport{}, Outlets: []Outlet{}}
	byURL := map[string][]string{}
	for _, info := range records.Layers() {
		lr := LayerReport{LayerInfo: info, Status: "not_loaded", KnownGaps: nil, Outlets: nil}
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
		lr.Freshness = &Freshness{SourceDate: *st.LastSourceDate, LastCrawl: st.LastCrawl.UTC(), LoadedAt: st.LastLoadedAt.UTC(), LoadID: *st.LastLoadID, Loads: st.Loads}
		cov := &Coverage{ParcelsNamed: st.ParcelsNamed, Counties: []CountyRef{}}
		for _, f := range st.Counties {
			ref, ok := names[f]
			if !ok {
				ref = CountyRef{FIPS: f}
			}
			cov.Counties = append(cov.Counties, ref)
		}
		lr.Coverage = cov
		lr.KnownGaps = []Gap{}
		if st.NamedNoGeometry > 0 {
			lr.KnownGaps = append(lr.KnownGaps, Gap{Gap: "rows_without_coordinates", Rows: st.NamedNoGeometry,
				About: "parcels named by this layer without coordinates: found by APN and in lists, not by the bbox search"})
		}
		if st.RejectedLastLoad > 0 {
			lr.KnownGaps = append(lr.KnownGaps, Gap{Gap: "rejected_rows", Rows: st.RejectedLastLoad,
				About: "rows of the latest load that could not be used (no or malformed parcel id, bad coordinates or dates); see the load's rejects report"})
		}
		if st.FailedLoads > 0 {
			lr.KnownGaps = append(lr.KnownGaps, Gap{Gap: "failed_loads", Rows: st.FailedLoads, About: "loads that failed midway; none of their rows is applied"})
		}
		lr.Outlets = st.SourceURLs
		for _, u := range st.SourceURLs {
			byURL[u] = append(byURL[u], string(info.Key))
		}
		r.Layers = append(r.Layers, lr)
	}
	for u, ls := range byURL {
		r.Outlets = append(r.Outlets, Outlet{URL: u, Layers: ls})
	}
	sort.Slice(r.Outlets, func(i, j int) bool { return r.Outlets[i].URL < r.Outlets[j].URL })
	return r, nil
}
