// Command rebuild measures how fast arr rebuilds its read models: it loads a
// log of realistic account and key events (AccountCreated, then six
// KeyIssued and three KeyRevoked per account) into a fresh database with
// AppendBulk, then rebuilds each projection from position 0 several times
// and prints the median events/s. Run it with scripts/bench/rebuild.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/builtin"
	"github.com/arr-dev/arr/scripts/bench/benchdb"
)

func main() {
	dbURL := flag.String("database-url", migratetest.AdminURL(), "PostgreSQL server to create the benchmark database on")
	events := flag.Int("events", 1_000_000, "events in the log (rounded down to whole accounts of 10 events)")
	runs := flag.Int("runs", 3, "rebuilds per projection; the median is reported")
	batch := flag.Int("batch", 5000, "projection batch size")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the rebuilds to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(context.Background(), *dbURL, *events, *runs, *batch, *jsonOut); err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
}

func run(ctx context.Context, admin string, n, runs, batch int, jsonOut string) error {
	db, err := benchdb.Create(ctx, admin, "arr_bench_rebuild")
	if err != nil {
		return err
	}
	defer db.Close()
	pool := db.Pool
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		return err
	}
	defer st.Close()

	accounts := n / 10
	start := time.Now()
	var chunk []eventstore.Append
	chunkEvents := 0
	for i := 0; i < accounts; i++ {
		a, err := accountEvents(i)
		if err != nil {
			return err
		}
		chunk = append(chunk, a)
		chunkEvents += len(a.Events)
		if chunkEvents >= 20000 || i == accounts-1 {
			if _, err := st.AppendBulk(ctx, chunk); err != nil {
				return fmt.Errorf("loading: %w", err)
			}
			chunk, chunkEvents = nil, 0
		}
	}
	head, _ := st.Head(ctx)
	load := time.Since(start)
	fmt.Printf("loaded %d events (%d accounts) with AppendBulk in %s: %.0f events/s (includes generating and encoding them)\n",
		head, accounts, load.Round(time.Millisecond), float64(head)/load.Seconds())

	r, err := projections.NewRunner(pool, st, projections.Config{BatchSize: batch, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))}, builtin.All()...)
	if err != nil {
		return err
	}
	if err := r.Setup(ctx); err != nil {
		return err
	}
	results := map[string]float64{}
	for _, p := range r.Projections() {
		var rates []float64
		for i := 0; i < runs; i++ {
			t0 := time.Now()
			if err := r.Rebuild(ctx, p.Name, nil); err != nil {
				return err
			}
			el := time.Since(t0)
			rates = append(rates, float64(head)/el.Seconds())
			fmt.Printf("  rebuild %-9s run %d: %8s  %9.0f events/s\n", p.Name, i+1, el.Round(time.Millisecond), rates[len(rates)-1])
		}
		sort.Float64s(rates)
		results[p.Name] = rates[len(rates)/2]
	}
	fmt.Printf("\nrebuild of %d events, median of %d runs (batch %d):\n", head, runs, batch)
	for _, p := range r.Projections() {
		fmt.Printf("  %-9s %9.0f events/s  (target >= 100000: %s)\n", p.Name, results[p.Name], verdict(results[p.Name] >= 100000))
	}
	if jsonOut != "" {
		f, err := os.Create(jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		return json.NewEncoder(f).Encode(map[string]any{"events": head, "runs": runs, "batch": batch,
			"bulk_load_events_per_s": float64(head) / load.Seconds(), "rebuild_events_per_s": results})
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func accountEvents(i int) (eventstore.Append, error) {
	email := fmt.Sprintf("bench-%d@example.com", i)
	id := account.IDForEmail(email)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	evs := []domain.Event{&account.AccountCreated{AccountID: id, Email: email, Plan: account.Free, CreatedAt: now}}
	var keys []uuid.UUID
	for k := 0; k < 6; k++ {
		svc := account.Services()[k%3]
		sec, err := account.NewSecret(svc)
		if err != nil {
			return eventstore.Append{}, err
		}
		kid := uuid.New()
		keys = append(keys, kid)
		evs = append(evs, &account.KeyIssued{AccountID: id, KeyID: kid, Service: svc, Prefix: svc.KeyPrefix(), Hint: sec.Hint, SecretHash: sec.Hash, IssuedAt: now})
	}
	for k := 0; k < 3; k++ {
		evs = append(evs, &account.KeyRevoked{AccountID: id, KeyID: keys[k], RevokedAt: now.Add(time.Hour)})
	}
	ne, err := eventstore.EncodeAll(eventstore.Metadata{Actor: "bench"}, evs...)
	if err != nil {
		return eventstore.Append{}, err
	}
	return eventstore.Append{StreamID: account.StreamID(id), Expected: eventstore.NoStream(), Events: ne}, nil
}
