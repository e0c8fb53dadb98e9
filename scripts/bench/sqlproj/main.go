// Command sqlproj measures how fast a SQL projection replays the log: it
// loads N CompletionRecorded events (gateway audit entries of six models,
// as the audit chain appends them) into a fresh database with AppendBulk,
// then rebuilds the spend_by_model from position 0, written per
// event (-- arr:on) and per batch (-- arr:batch), several times each, and
// prints the median events/s. It checks that each build counted every
// completion and summed every cost. Run it with scripts/bench/sqlproj.sh.
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
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
	"github.com/arr-dev/arr/scripts/bench/benchdb"
)

// The two forms of spend_by_model (docs/sql-projections.md).
var forms = map[string]string{
	"on": `-- arr:projection spend_on
CREATE TABLE spend (day date, model text, cost_micro bigint, n bigint, PRIMARY KEY (day, model));
-- arr:on CompletionRecorded
INSERT INTO spend VALUES (:recorded_at::date, :data->'payload'->>'model', (:data->'payload'->>'cost_micro_usd')::bigint, 1)
ON CONFLICT (day, model) DO UPDATE SET cost_micro = spend.cost_micro + EXCLUDED.cost_micro, n = spend.n + 1;
`,
	"batch": `-- arr:projection spend_batch
CREATE TABLE spend (day date, model text, cost_micro bigint, n bigint, PRIMARY KEY (day, model));
-- arr:batch CompletionRecorded
INSERT INTO spend
SELECT recorded_at::date, data->'payload'->>'model', sum((data->'payload'->>'cost_micro_usd')::bigint), count(*)
FROM :events GROUP BY 1, 2
ON CONFLICT (day, model) DO UPDATE SET cost_micro = spend.cost_micro + EXCLUDED.cost_micro, n = spend.n + EXCLUDED.n;
`,
}

var models = []string{"gpt-4.1-nano", "gpt-4.1-mini", "gpt-4.1", "claude-haiku", "claude-sonnet", "o3"}

func main() {
	dbURL := flag.String("database-url", migratetest.AdminURL(), "PostgreSQL server to create the benchmark database on")
	events := flag.Int("events", 1_000_000, "CompletionRecorded events in the log")
	runs := flag.Int("runs", 3, "rebuilds per form; the median is reported")
	batch := flag.Int("batch", 20000, "rebuild batch size (events per transaction)")
	only := flag.String("forms", "on,batch", "forms to measure: on (per event), batch (per batch)")
	payload := flag.String("payload", "audit", "audit: each event is an audit entry as the gateway records it (hashes, ids, the whole completion: about 800 bytes of JSON); compact: the completion's model and cost only (about 200 bytes)")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the rebuilds to this file")
	flag.Parse()
	if *payload != "audit" && *payload != "compact" {
		log.Fatalf("-payload %q: audit or compact", *payload)
	}
	if err := run(context.Background(), *dbURL, *events, *runs, *batch, strings.Split(*only, ","), *payload == "compact", *jsonOut, *cpuProfile); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, admin string, n, runs, batch int, only []string, compact bool, jsonOut, cpuProfile string) error {
	db, err := benchdb.Create(ctx, admin, "arr_bench_sqlproj")
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

	start := time.Now()
	wantCost, size, err := load(ctx, st, n, compact)
	if err != nil {
		return fmt.Errorf("loading: %w", err)
	}
	head, _ := st.Head(ctx)
	load := time.Since(start)
	fmt.Printf("loaded %d CompletionRecorded events (%d bytes of JSON each on average) with AppendBulk in %s\n", head, size, load.Round(time.Millisecond))
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE events"); err != nil {
		return err
	}

	e, err := sqlproj.Open(ctx, pool, sqlproj.Config{StatementTimeout: 10 * time.Minute})
	if err != nil {
		return err
	}
	defer e.Close()
	r, err := projections.NewRunner(pool, st, projections.Config{RebuildBatchSize: batch, BatchTimeout: 10 * time.Minute,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	defer dropRoles(context.Background(), pool, e)
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	results := map[string]float64{}
	for _, form := range only {
		src, ok := forms[form]
		if !ok {
			return fmt.Errorf("no form %q (on, batch)", form)
		}
		d, err := e.Parse(form+".sql", src)
		if err != nil {
			return err
		}
		if err := e.Check(ctx, d); err != nil {
			return err
		}
		if err := r.Add(ctx, e.Projection(d), true); err != nil {
			return err
		}
		var rates []float64
		for i := 0; i < runs; i++ {
			t0 := time.Now()
			if err := r.Rebuild(ctx, d.Name, nil); err != nil {
				return err
			}
			el := time.Since(t0)
			rates = append(rates, float64(head)/el.Seconds())
			var cost, count int64
			if err := pool.QueryRow(ctx, `SELECT sum(cost_micro)::bigint, sum(n)::bigint FROM `+pgx.Identifier{projections.Schema(d.Name), "spend"}.Sanitize()).Scan(&cost, &count); err != nil {
				return err
			}
			if count != int64(head) || cost != wantCost {
				return fmt.Errorf("%s counted %d completions costing %d, want %d costing %d", d.Name, count, cost, head, wantCost)
			}
			fmt.Printf("  rebuild %-11s run %d: %8s  %9.0f events/s\n", d.Name, i+1, el.Round(time.Millisecond), rates[i])
		}
		sort.Float64s(rates)
		results[form] = rates[len(rates)/2]
	}
	fmt.Printf("\nreplay of %d events (%d bytes each) into spend_by_model, median of %d runs (batch %d):\n", head, size, runs, batch)
	for _, form := range only {
		fmt.Printf("  %-6s %9.0f events/s  (target >= 100000: %s)\n", form, results[form], verdict(results[form] >= 100000))
	}
	if jsonOut != "" {
		f, err := os.Create(jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		return json.NewEncoder(f).Encode(map[string]any{"events": head, "runs": runs, "batch": batch, "event_bytes": size,
			"load_seconds": load.Seconds(), "replay_events_per_s": results})
	}
	return nil
}

// load appends n completions (models round robin, costs 1..997 µ$) in bulk
// appends of 20,000 to the audit chain's stream; it returns their total
// cost and the average size of an event's JSON.
func load(ctx context.Context, st *postgres.Store, n int, compact bool) (total int64, size int, err error) {
	var bytes int
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	account := uuid.New()
	for done := 0; done < n; {
		k := min(20000, n-done)
		evs := make([]eventstore.NewEvent, k)
		for i := range evs {
			seq := done + i
			cost := int64(seq%997 + 1)
			total += cost
			if compact {
				payload, _ := json.Marshal(map[string]any{"model": models[seq%len(models)], "cost_micro_usd": cost})
				ne, err := eventstore.Encode(&audit.CompletionRecorded{Seq: uint64(seq + 1), Payload: payload, Link: audit.LinkV2}, eventstore.Metadata{Actor: "bench"})
				if err != nil {
					return 0, 0, err
				}
				evs[i], bytes = ne, bytes+len(ne.Data)
				continue
			}
			payload, err := json.Marshal(audit.Completion{AccountID: account, KeyID: account, RequestID: fmt.Sprintf("req-%d", seq),
				RequestHash: strings.Repeat("a", 64), ResponseHash: strings.Repeat("b", 64), Tier: "nano", Model: models[seq%len(models)], Vendor: "openai",
				Difficulty: 0.3, PromptTokens: 120, CompletionTokens: 340, CostMicroUSD: cost, Outcome: "ok", Attempts: 1,
				UpstreamMS: 812.5, TotalMS: 815.25, StartedAt: at.Add(time.Duration(seq) * time.Second)})
			if err != nil {
				return 0, 0, err
			}
			ne, err := eventstore.Encode(&audit.CompletionRecorded{Seq: uint64(seq + 1), PrevHash: strings.Repeat("c", 64), Hash: strings.Repeat("d", 64),
				Payload: payload, Link: audit.LinkV2}, eventstore.Metadata{Actor: "bench", RequestID: fmt.Sprintf("req-%d", seq)})
			if err != nil {
				return 0, 0, err
			}
			evs[i], bytes = ne, bytes+len(ne.Data)
		}
		if _, err := st.AppendBulk(ctx, []eventstore.Append{{StreamID: audit.StreamID, Expected: eventstore.Any(), Events: evs}}); err != nil {
			return 0, 0, err
		}
		done += k
	}
	return total, bytes / max(1, n), nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// dropRoles drops the benchmark database's projection roles (roles
// belong to the server and would outlive the database).
func dropRoles(ctx context.Context, pool *pgxpool.Pool, e *sqlproj.Engine) {
	for _, n := range []string{"spend_on", "spend_batch"} {
		id := pgx.Identifier{e.Role(n)}.Sanitize()
		_, _ = pool.Exec(ctx, `DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '`+e.Role(n)+`') THEN EXECUTE 'DROP OWNED BY `+id+`; DROP ROLE `+id+`'; END IF; END $$`)
	}
}
