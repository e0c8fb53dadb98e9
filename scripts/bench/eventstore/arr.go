package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations"
)

func benchData(w, seq int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"writer":%d,"seq":%d,"note":"a benchmark event of modest size"}`, w, seq))
}

// benchMetadata is the metadata both stores get; Message DB takes it as JSON.
var benchMetadata = eventstore.Metadata{CorrelationID: "bench"}

// newID returns a random (v4) or time-ordered (v7) UUID.
func newID(version int) uuid.UUID {
	if version == 7 {
		if id, err := uuid.NewV7(); err == nil {
			return id
		}
	}
	return uuid.New()
}

// arrDB is a fresh, migrated database with a Store on it.
type arrDB struct {
	store *postgres.Store
	close func()
}

func openArr(ctx context.Context, srv server, cfg config, tr *tracer) (*arrDB, error) {
	db, err := srv.fresh(ctx, "arr_bench")
	if err != nil {
		return nil, err
	}
	u, drop := db.url, db.drop
	pool, err := newPool(ctx, u, 4, tr.queryTracer())
	if err != nil {
		drop()
		return nil, err
	}
	if err := migrations.Apply(ctx, pool, nil); err != nil {
		pool.Close()
		drop()
		return nil, fmt.Errorf("migrating %s: %w", u, err)
	}
	sc := postgres.Config{MaxBatchEvents: cfg.maxBatch}
	if cfg.noopHook {
		sc.BeforeCommit = func(context.Context, int) error { return nil }
	}
	s, err := postgres.New(pool, sc)
	if err != nil {
		pool.Close()
		drop()
		return nil, fmt.Errorf("opening store: %w", err)
	}
	return &arrDB{store: s, close: func() { s.Close(); pool.Close(); drop() }}, nil
}

// arrSingle measures single-event Append at one concurrency.
func arrSingle(ctx context.Context, cfg config, srv server, writers int, tr *tracer) (sample, error) {
	db, err := openArr(ctx, srv, cfg, tr)
	if err != nil {
		return sample{}, err
	}
	defer db.close()
	if err := srv.settle(ctx); err != nil {
		return sample{}, err
	}
	tr.reset()
	streams := make([]string, writers)
	for w := range streams {
		streams[w] = fmt.Sprintf("bench-%d", w)
	}
	smp, err := drive(ctx, writers, cfg.warmup, cfg.duration, func(ctx context.Context, w, seq int) error {
		_, err := db.store.Append(ctx, streams[w], eventstore.Any(), eventstore.NewEvent{
			ID: newID(cfg.idVersion), Type: "BenchEvent", SchemaVersion: 1, Data: benchData(w, seq), Metadata: benchMetadata,
		})
		return err
	})
	if err != nil {
		return smp, err
	}
	// Check that the appends wrote what they claimed.
	head, err := db.store.Head(ctx)
	if err != nil {
		return smp, err
	}
	if int(head) != smp.calls {
		return smp, fmt.Errorf("arr: %d appends succeeded but the log head is %d", smp.calls, head)
	}
	return smp, nil
}

// bulkSample is one bulk run.
type bulkSample struct {
	EventsPerSec float64 `json:"events_per_sec"`
	Events       int     `json:"events"`
	Seconds      float64 `json:"seconds"`
	ChunkP50ms   float64 `json:"chunk_p50_ms"`
}

// arrBulk appends cfg.bulkEvents events with AppendBulk in chunks of
// cfg.bulkChunk, cfg.bulkPerStrm events per stream, from one goroutine, the
// way an import does: each chunk is built, then appended. Only the
// AppendBulk calls are timed, and only one chunk is in memory at a time, so
// neither building events nor collecting a million of them is measured.
func arrBulk(ctx context.Context, cfg config, srv server, run int, tr *tracer) (bulkSample, error) {
	db, err := openArr(ctx, srv, cfg, tr)
	if err != nil {
		return bulkSample{}, err
	}
	defer db.close()
	if err := srv.settle(ctx); err != nil {
		return bulkSample{}, err
	}
	tr.reset()
	var lat []float64
	var el time.Duration
	for done, c := 0, 0; done < cfg.bulkEvents; c++ {
		var chunk []eventstore.Append
		for n := 0; n < cfg.bulkChunk && done < cfg.bulkEvents; {
			k := min(cfg.bulkPerStrm, cfg.bulkChunk-n, cfg.bulkEvents-done)
			a := eventstore.Append{StreamID: fmt.Sprintf("bulk%d-%d", run, done), Expected: eventstore.NoStream(), Events: make([]eventstore.NewEvent, k)}
			for i := range a.Events {
				a.Events[i] = eventstore.NewEvent{ID: newID(cfg.idVersion), Type: "BenchEvent", SchemaVersion: 1, Data: benchData(c, done+i), Metadata: benchMetadata}
			}
			chunk = append(chunk, a)
			n, done = n+k, done+k
		}
		t0 := time.Now()
		if _, err := db.store.AppendBulk(ctx, chunk); err != nil {
			return bulkSample{}, fmt.Errorf("bulk append: %w", err)
		}
		d := time.Since(t0)
		el += d
		lat = append(lat, ms(d))
	}
	if head, err := db.store.Head(ctx); err != nil || int(head) != cfg.bulkEvents {
		return bulkSample{}, fmt.Errorf("arr bulk: log head %d after %d events (%v)", head, cfg.bulkEvents, err)
	}
	slices.Sort(lat)
	return bulkSample{EventsPerSec: float64(cfg.bulkEvents) / el.Seconds(), Events: cfg.bulkEvents, Seconds: el.Seconds(), ChunkP50ms: median(lat)}, nil
}
