package parcels

import (
	"context"
	"fmt"
)

// TileClustersFromParcels is tile z/x/y of clusters gathered from its
// parcels at request time (what a zoom without cells reads), for the
// tests that compare it with the tile the cells make.
func (q *Queries) TileClustersFromParcels(ctx context.Context, z, x, y int, layers []string) (TileResult, error) {
	args := []any{z, x, y, 4096 / tileCap(z).Grid}
	r := TileResult{Clusters: true}
	if err := q.pool.QueryRow(ctx, fmt.Sprintf(tileClustersSQL, layersFilter(&args, layers)), args...).Scan(&r.Version.Schema, &r.Version.Position, &r.Tile); err != nil {
		return TileResult{}, err
	}
	return r, nil
}
