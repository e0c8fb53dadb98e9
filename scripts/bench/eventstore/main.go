// Command eventstore benchmarks arr's PostgreSQL event store against Message
// DB's write_message on the same PostgreSQL server: single-event appends at
// several concurrencies and bulk appends. Each measurement runs on a fresh
// database so table sizes are comparable. Results are medians over runs,
// printed as a table and written as JSON; nothing is asserted.
//
// Run it through scripts/bench/eventstore.sh, which installs Message DB from
// npm first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

type config struct {
	databaseURL string
	writers     []int
	duration    time.Duration
	warmup      time.Duration
	runs        int
	bulkEvents  int
	bulkChunk   int
	bulkPerStrm int
	messageDB   string // directory holding Message DB's database/ scripts; empty skips it
	mdbOwnCats  bool
	jsonOut     string
	trace       bool
	skipArr     bool
	maxBatch    int
	noopHook    bool
	cpuProfile  string
	idVersion   int
}

func main() {
	var cfg config
	var writers string
	flag.StringVar(&cfg.databaseURL, "database-url", envOr("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL server; a fresh database is created on it for every measurement")
	flag.StringVar(&writers, "writers", "1,8,64", "comma-separated concurrencies for single-event appends")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "measured time per single-event run")
	flag.DurationVar(&cfg.warmup, "warmup", 500*time.Millisecond, "unmeasured time before each single-event run")
	flag.IntVar(&cfg.runs, "runs", 5, "runs per measurement; the median is reported")
	flag.IntVar(&cfg.bulkEvents, "bulk-events", 1_000_000, "events per bulk run (0 skips bulk)")
	flag.IntVar(&cfg.bulkChunk, "bulk-chunk", 50_000, "events per AppendBulk call")
	flag.IntVar(&cfg.bulkPerStrm, "bulk-stream-events", 100, "events per stream in a bulk append")
	flag.StringVar(&cfg.messageDB, "messagedb", "", "path to Message DB's database/ directory (from npm @eventide/message-db); empty skips Message DB")
	flag.BoolVar(&cfg.mdbOwnCats, "messagedb-own-categories", true, "also measure Message DB with one category per writer (bench<w>-0), which avoids its per-category lock")
	flag.StringVar(&cfg.jsonOut, "json", "-", "where to write the JSON summary (- for stdout)")
	flag.BoolVar(&cfg.trace, "trace", false, "time every SQL statement of arr's appends and print where the time goes")
	flag.BoolVar(&cfg.skipArr, "skip-arr", false, "skip arr single-event runs")
	flag.IntVar(&cfg.maxBatch, "max-batch-events", 0, "arr Config.MaxBatchEvents (0: default)")
	flag.BoolVar(&cfg.noopHook, "noop-before-commit", false, "give arr a BeforeCommit hook that does nothing (COMMIT then takes its own round trip)")
	flag.IntVar(&cfg.idVersion, "id-version", 7, "UUID version of event ids, 7 (time-ordered, what eventstore.Encode makes) or 4 (random)")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the whole run to this file")
	flag.Parse()
	for _, w := range strings.Split(writers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bad -writers entry %q\n", w)
			os.Exit(2)
		}
		cfg.writers = append(cfg.writers, n)
	}
	if cfg.idVersion != 4 && cfg.idVersion != 7 {
		fmt.Fprintln(os.Stderr, "-id-version must be 4 or 7")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: cpu profile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx, cfg); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
