// Command export measures `arr events export`: it fills a fresh database
// with -events events by AppendBulk, shaped like arr's busiest types
// (gateway completions with their audit payload, usage counts, answers
// served), then runs `arr events export --format parquet --out FILE`
// over the whole log -runs times, and prints each run's wall time, peak
// resident memory (by GNU time) and file size, and their medians.
// With scripts/clients/duckdb installed it has DuckDB count the last
// file's rows. It asserts nothing.
//
// Run it through scripts/bench/export.sh.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations"
)

func main() {
	dbURL := flag.String("database-url", envOr("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL server; a fresh database is created on it and dropped after")
	events := flag.Int("events", 1_000_000, "events in the log")
	runs := flag.Int("runs", 3, "timed runs of arr events export")
	format := flag.String("format", "parquet", "export format: parquet or ndjson")
	arr := flag.String("arr", "", "the arr binary to time")
	keep := flag.Bool("keep", false, "keep the filled database (and print its name) instead of dropping it")
	reuse := flag.String("reuse", "", "time the export of this database, filled by an earlier -keep run, instead of filling a new one")
	flag.Parse()
	if err := run(context.Background(), *dbURL, *arr, *format, *events, *runs, *keep, *reuse); err != nil {
		fmt.Fprintln(os.Stderr, "export bench:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, admin, arr, format string, n, runs int, keep bool, reuse string) error {
	if arr == "" {
		return fmt.Errorf("-arr: the arr binary is required")
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "arr_bench_export_" + hex.EncodeToString(b)
	if reuse != "" {
		name = reuse
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if reuse == "" {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			return err
		}
	}
	if keep || reuse != "" {
		fmt.Printf("database %s is kept: drop it with DROP DATABASE %s\n", name, name)
	} else {
		defer conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") //nolint:errcheck
	}
	u, _ := url.Parse(admin)
	u.Path = "/" + name
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrations.Apply(ctx, pool, nil); err != nil {
		return err
	}
	if reuse == "" {
		start := time.Now()
		if err := fill(ctx, pool, n); err != nil {
			return err
		}
		fmt.Printf("filled a log of %d events in %s\n", n, time.Since(start).Round(time.Millisecond))
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE events"); err != nil {
			return err
		}
	} else if err := pool.QueryRow(ctx, "SELECT count(*) FROM events").Scan(&n); err != nil {
		return err
	}
	var logBytes int64
	if err := pool.QueryRow(ctx, "SELECT pg_total_relation_size('events')").Scan(&logBytes); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "arr-bench-export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "events."+format)
	env := append(os.Environ(), "DATABASE_URL="+u.String(), "ARR_LOG_LEVEL=warn", "ARR_DATA_DIR="+dir)
	var times []time.Duration
	var rss []int64
	var size int64
	for i := range runs {
		t0 := time.Now()
		out, maxRSS, err := measure(ctx, env, arr, "events", "export", "--format", format, "--out", file)
		el := time.Since(t0)
		if err != nil {
			return fmt.Errorf("arr events export: %v\n%s", err, out)
		}
		st, err := os.Stat(file)
		if err != nil {
			return err
		}
		size = st.Size()
		times, rss = append(times, el), append(rss, maxRSS)
		fmt.Printf("run %d: %s (%.0f events/s), peak RSS %.1f MB, file %.1f MB\n%s", i+1, el.Round(time.Millisecond),
			float64(n)/el.Seconds(), float64(maxRSS)/1e6, float64(size)/1e6, lastLine(out))
	}
	slices.Sort(times)
	slices.Sort(rss)
	fmt.Printf("arr events export --format %s of %d events (log table %.0f MB) on %d CPUs: median %s (%.0f events/s), min %s, max %s; peak RSS median %.1f MB, max %.1f MB; file %.1f MB\n",
		format, n, float64(logBytes)/1e6, runtime.NumCPU(), times[len(times)/2].Round(time.Millisecond), float64(n)/times[len(times)/2].Seconds(),
		times[0].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond), float64(rss[len(rss)/2])/1e6, float64(rss[len(rss)-1])/1e6, float64(size)/1e6)
	if format == "parquet" {
		duckdbCount(file)
	}
	return nil
}

// measure runs arr with args and returns its output and its peak
// resident memory in bytes. The peak comes from GNU time (/usr/bin/time
// -f %M), which starts arr from its own small process: the rusage of a
// child this process starts would count this process's memory too (Linux
// keeps the high-water mark of the memory a child had before exec, and
// Go starts children with vfork, sharing this process's).
func measure(ctx context.Context, env []string, arr string, args ...string) ([]byte, int64, error) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return nil, 0, fmt.Errorf("/usr/bin/time (GNU time, Debian package time) is needed to read the peak memory: %w", err)
	}
	f, err := os.CreateTemp("", "arr-bench-rss-")
	if err != nil {
		return nil, 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd := exec.CommandContext(ctx, "/usr/bin/time", append([]string{"-f", "%M", "-o", f.Name(), arr}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, 0, err
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return out, 0, err
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return out, 0, fmt.Errorf("GNU time's %%M: %q: %w", b, err)
	}
	return out, kib * 1024, nil
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return "  " + lines[len(lines)-1] + "\n"
}

// fill appends n events in streams of 100: 80% gateway completions (the
// audit entry with its completion payload), 15% usage counts, 5% answers
// served.
func fill(ctx context.Context, pool *pgxpool.Pool, n int) error {
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		return err
	}
	defer st.Close()
	acct, key := uuid.New(), uuid.New()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	md := eventstore.Metadata{CorrelationID: "bench", Actor: "key:" + key.String(), RequestID: "req-bench"}
	prev := audit.Genesis
	for done := 0; done < n; {
		var appends []eventstore.Append
		for chunk := 0; chunk < 50_000 && done < n; {
			evs := make([]eventstore.NewEvent, 0, 100)
			for j := 0; j < 100 && done < n; j++ {
				at := t0.Add(time.Duration(done) * time.Second)
				var e domain.Event
				switch done % 20 {
				case 0, 1, 2:
					e = &usage.CallsCounted{AccountID: acct, KeyID: key, Service: account.Gateway, Day: usage.Day(at), Calls: int64(1 + done%7), CountedAt: at}
				case 3:
					e = &answer.AnswerServed{AccountID: acct, KeyID: key, CacheKey: fmt.Sprintf("%032x", done), AnswerID: uuid.New(), Tier: answer.Free, Mode: answer.Quick, Cached: done%2 == 0, ServedAt: at}
				default:
					p, err := audit.Canonical(audit.Completion{AccountID: acct, KeyID: key, RequestID: fmt.Sprintf("req-%d", done),
						RequestHash: fmt.Sprintf("%064x", done), ResponseHash: fmt.Sprintf("%064x", done*7), Tier: "small", Model: "gpt-4.1-mini",
						Vendor: "openai", Difficulty: float64(done%100) / 100, PromptTokens: int64(100 + done%900), CompletionTokens: int64(50 + done%400),
						CostMicroUSD: int64(10 + done%300), Outcome: "ok", Attempts: 1, UpstreamMS: 412.5, TotalMS: 430.25, StartedAt: at})
					if err != nil {
						return err
					}
					hash := fmt.Sprintf("%064x", done+1)
					e = &audit.CompletionRecorded{Seq: uint64(done), PrevHash: prev, Hash: hash, Payload: p, Link: audit.LinkV2}
					prev = hash
				}
				ne, err := eventstore.Encode(e, md)
				if err != nil {
					return err
				}
				evs = append(evs, ne)
				done++
				chunk++
			}
			appends = append(appends, eventstore.Append{StreamID: fmt.Sprintf("bench-%d", done), Expected: eventstore.NoStream(), Events: evs})
		}
		if _, err := st.AppendBulk(ctx, appends); err != nil {
			return err
		}
	}
	return nil
}

// duckdbCount has DuckDB read the file, when scripts/clients/duckdb is
// installed: the rows per type and the summed completion cost.
func duckdbCount(file string) {
	dir := "scripts/clients/duckdb"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err != nil {
		fmt.Println("DuckDB check skipped: scripts/clients/duckdb is not installed (npm ci there)")
		return
	}
	q, _ := json.Marshal(map[string]string{"types": `SELECT type, count(*) AS n, sum(json_extract(data, '$.payload.cost_micro_usd')::BIGINT) AS cost FROM events GROUP BY type ORDER BY type`})
	cmd := exec.Command("node", "query.mjs", file)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(q))
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Printf("DuckDB check failed: %v\n%s", err, out)
		return
	}
	fmt.Printf("DuckDB read it in %s: %s", time.Since(t0).Round(time.Millisecond), out)
}
