package parcels

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
)

// TestPinnedRefusesTablesSwappedInAfterTheSnapshot: a transaction whose
// snapshot was taken before a rebuild swapped the parcels read model in,
// and whose statement then read the new tables (names resolve when a
// statement starts), fails the check with errSwapped; one that read the
// tables of its snapshot passes it.
func TestPinnedRefusesTablesSwappedInAfterTheSnapshot(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, Projection{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	read := func(swap bool) error {
		t.Helper()
		tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck
		// The snapshot is taken here.
		if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
		if swap {
			if err := runner.Rebuild(ctx, Name, nil); err != nil {
				t.Fatal(err)
			}
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM rm_parcels.parcels`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return pinned(ctx, tx)
	}
	if err := read(false); err != nil {
		t.Fatalf("no rebuild: %v, want the check to pass", err)
	}
	if err := read(true); !errors.Is(err, errSwapped) {
		t.Fatalf("a rebuild swapped in after the snapshot: %v, want errSwapped", err)
	}
}
