package app

import (
	"context"

	"github.com/arr-dev/arr/projections/parcels"
)

// Features is the parcels read model as the OGC API – Features reads it:
// feature pages of a collection and the collections' extents
// (projections/parcels/ogc.go).
type Features interface {
	Features(ctx context.Context, q parcels.FeatureQuery) ([]parcels.Feature, error)
	Extents(ctx context.Context) (map[string]parcels.Extent, error)
	ExtentsVersion(ctx context.Context) (parcels.ReadModelVersion, error)
}

var _ Features = (*parcels.Queries)(nil)
