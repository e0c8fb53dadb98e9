// Command logverify measures `arr events verify` on a log of many events:
// it fills a fresh database with -events events by AppendBulk (each a
// leaf of the Merkle tree, as every append makes it), has arr sign a head,
// then times `arr events verify` over the whole log, -runs times. It
// prints the times and events/s and asserts nothing.
//
// Run it through scripts/bench/logverify.sh.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/scripts/bench/benchdb"
)

func main() {
	dbURL := flag.String("database-url", envOr("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL server; a fresh database is created on it and dropped after")
	events := flag.Int("events", 1_000_000, "events in the log")
	runs := flag.Int("runs", 3, "timed runs of arr events verify")
	arr := flag.String("arr", "", "the arr binary to time")
	flag.Parse()
	if err := run(context.Background(), *dbURL, *arr, *events, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "logverify:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, admin, arr string, n, runs int) error {
	if arr == "" {
		return fmt.Errorf("-arr: the arr binary is required")
	}
	db, err := benchdb.Create(ctx, admin, "arr_bench_verify")
	if err != nil {
		return err
	}
	defer db.Close()
	pool := db.Pool
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		return err
	}
	start := time.Now()
	md := eventstore.Metadata{CorrelationID: "bench", Actor: "key:bench"}
	for done := 0; done < n; {
		var appends []eventstore.Append
		for chunk := 0; chunk < 50_000 && done < n; {
			evs := make([]eventstore.NewEvent, 0, 100)
			for j := 0; j < 100 && done < n; j++ {
				evs = append(evs, eventstore.NewEvent{ID: uuid.New(), Type: "BenchRecorded", SchemaVersion: 1, Metadata: md,
					Data: json.RawMessage(fmt.Sprintf(`{"seq":%d,"note":"a benchmark event of modest size"}`, done))})
				done++
				chunk++
			}
			appends = append(appends, eventstore.Append{StreamID: fmt.Sprintf("bench-%d", done), Expected: eventstore.NoStream(), Events: evs})
		}
		if _, err := st.AppendBulk(ctx, appends); err != nil {
			return err
		}
	}
	_ = st.Close()
	fmt.Printf("filled a log of %d events in %s\n", n, time.Since(start).Round(time.Millisecond))
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE events"); err != nil {
		return err
	}
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	env := append(os.Environ(), "DATABASE_URL="+db.URL, "ARR_LOG_SIGNING_KEY="+base64.StdEncoding.EncodeToString(seed),
		"ARR_LOG_LEVEL=warn", "ARR_DATA_DIR="+os.TempDir())
	cmd := exec.CommandContext(ctx, arr, "events", "checkpoint")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("arr events checkpoint: %v\n%s", err, out)
	}
	var times []time.Duration
	for i := range runs {
		cmd := exec.CommandContext(ctx, arr, "events", "verify")
		cmd.Env = env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		el := time.Since(t0)
		if err != nil {
			return fmt.Errorf("arr events verify: %v\n%s", err, out)
		}
		times = append(times, el)
		fmt.Printf("run %d: %s (%.0f events/s)\n%s", i+1, el.Round(time.Millisecond), float64(n)/el.Seconds(), out)
	}
	slices.Sort(times)
	med := times[len(times)/2]
	fmt.Printf("arr events verify over %d events on %d CPUs: median %s (%.0f events/s), min %s, max %s\n",
		n, runtime.NumCPU(), med.Round(time.Millisecond), float64(n)/med.Seconds(), times[0].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond))
	return nil
}
