package projectiontest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/projections"
)

// Setup puts the PostgreSQL event store on pool (a migrated database of
// the test's own, e.g. migratetest.NewPool's) and a runner (batches of
// 100) for ps with their read models created. The store is closed when
// the test ends.
func Setup(t *testing.T, pool *pgxpool.Pool, ps ...projections.Projection) (*pgxpool.Pool, eventstore.Store, *projections.Runner) {
	t.Helper()
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100}, ps...)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return pool, st, r
}
