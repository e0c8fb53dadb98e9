package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections/parcels"
)

// Parcels is the parcels read model: parcels with their layer signals,
// records, lenders and the layers' load state (projections/parcels).
type Parcels interface {
	InBBox(ctx context.Context, b records.BBox, layers []string, after *parcels.ParcelKey, limit int) ([]parcels.ParcelFeature, error)
	Near(ctx context.Context, n records.Near, layers []string, after *parcels.RankedKey, limit int) ([]parcels.ParcelFeature, error)
	ByAddress(ctx context.Context, norm string, layers []string, after *parcels.RankedKey, limit int) ([]parcels.ParcelFeature, error)
	ByAPN(ctx context.Context, apnNorm, county string, layers []string, after *parcels.ParcelKey, limit int) ([]parcels.ParcelFeature, error)
	InPolygon(ctx context.Context, p records.Polygon, layers []string, after *parcels.ParcelKey, limit int) ([]parcels.ParcelFeature, error)
	Centre(ctx context.Context) (lon, lat float64, ok bool)
	TilePoints(ctx context.Context, z, x, y int, layers []string, w records.WeightTable, asOf time.Time) (parcels.TileResult, error)
	TileClusters(ctx context.Context, z, x, y int, layers []string) (parcels.TileResult, error)
	TileVersion(ctx context.Context) (parcels.ReadModelVersion, error)
	Parcel(ctx context.Context, k parcels.ParcelKey) (parcels.Parcel, error)
	ParcelsByAPN(ctx context.Context, apn, county string) ([]parcels.ParcelKey, error)
	Records(ctx context.Context, f parcels.RecordFilter) ([]parcels.Record, int, error)
	Lenders(ctx context.Context, countyPrefix string, limit, offset int) ([]parcels.Lender, int, error)
	CountiesCovered(ctx context.Context) (map[string][]string, error)
	LayerStates(ctx context.Context) (map[string]parcels.LayerState, error)
	DataSources(ctx context.Context, gaz *records.Gazetteer, now time.Time) (parcels.DataSourceReport, error)
	// Deliveries reads the list monitors' outbox, which lives beside the
	// layer records (projections/parcels/watch.go).
	Deliveries(ctx context.Context, monitor uuid.UUID, status string, limit, offset int) ([]parcels.Delivery, int, error)
	// Export reads a county's parcels with their layer records from one
	// snapshot (projections/parcels/export.go).
	Export(ctx context.Context, q parcels.ExportQuery, sink parcels.ExportSink) error
}

var _ Parcels = (*parcels.Queries)(nil)
