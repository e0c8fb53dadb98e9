package projections_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// BenchmarkStep is a batch's hot path: one event appended (not timed),
// one batch applied (read, lock the checkpoint, apply, advance, commit).
func BenchmarkStep(b *testing.B) {
	pool, _ := migratetest.NewPool(b)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r, err := projections.NewRunner(pool, st, projections.Config{}, logstats.Projection{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	data, _ := json.Marshal(map[string]int{"i": 1})
	for b.Loop() {
		b.StopTimer()
		if _, err := st.Append(ctx, "tick-1", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "Ticked", SchemaVersion: 1, Data: data}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, n, err := r.Step(ctx, logstats.Name); err != nil || n != 1 {
			b.Fatalf("step: %d events, %v", n, err)
		}
	}
}
