// Command records benchmarks the records service on a generated,
// clearly synthetic county (FIPS 99999, APNs SYN-…, addresses "… SYNTHETIC
// ST"; for load only): the bulk load of N parcels through the event log
// (append, then the parcels projection applying it), then the bbox query at
// a given concurrency through the real HTTP handler, and EXPLAIN of the
// query. Run it through scripts/bench/records.sh.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
	"github.com/arr-dev/arr/readapi/records"
)

type result struct {
	Parcels         int     `json:"parcels"`
	AppendSeconds   float64 `json:"append_seconds"`
	AppendRowsPerS  float64 `json:"append_rows_per_second"`
	ApplySeconds    float64 `json:"projection_apply_seconds"`
	EndToEndRowsPS  float64 `json:"end_to_end_rows_per_second"`
	Concurrency     int     `json:"concurrency"`
	Requests        int     `json:"requests"`
	RequestsPerSec  float64 `json:"requests_per_second"`
	P50ms           float64 `json:"p50_ms"`
	P99ms           float64 `json:"p99_ms"`
	FeaturesPerResp float64 `json:"mean_features_per_response"`
	Explain         string  `json:"explain"`
	LoadAvgStart    string  `json:"load_average_start"`
	LoadAvgEnd      string  `json:"load_average_end"`
	Counted         int64   `json:"requests_counted_by_rate_limiter"`
}

// loadAvg is the 1, 5 and 15 minute load averages (the machine is shared:
// read the figures with it).
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func main() {
	n := flag.Int("parcels", 1_000_000, "synthetic parcels to load")
	conc := flag.Int("concurrency", 64, "concurrent bbox clients")
	dur := flag.Duration("duration", 20*time.Second, "how long to run the bbox load")
	boxDeg := flag.Float64("box", 0.01, "side of each query's bbox, degrees")
	admin := flag.String("database-url", migratetest.AdminURL(), "PostgreSQL server (a database arr_bench_records is made on it)")
	jsonOut := flag.String("json", "", "write the result as JSON here")
	poolSize := flag.Int("pool", 16, "PostgreSQL connections (arr serve's default is 16)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the bbox phase here")
	flag.Parse()
	profilePath = *cpuProfile
	if err := run(*n, *conc, *poolSize, *dur, *boxDeg, *admin, *jsonOut); err != nil {
		log.Fatal(err)
	}
}

var profilePath string

// tailCount finds the "count" member the handler writes after the
// features.
func tailCount(body []byte) (int, bool) {
	i := bytes.LastIndex(body, []byte(`],"count":`))
	if i < 0 || len(body) == 0 || body[len(body)-1] != '}' {
		return 0, false
	}
	rest := body[i+len(`],"count":`):]
	j := bytes.IndexByte(rest, ',')
	if j < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(string(rest[:j]))
	return n, err == nil
}

// The synthetic county: a 0.5 x 0.5 degree square.
const west, south, side = -100.5, 40.0, 0.5

func generate(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "apn,address,lat,lon,date,amount")
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "SYN-%07d,%d SYNTHETIC ST,%.6f,%.6f,2026-0%d-15,%d.%02d\n", i, 1+i%9999,
			south+r.Float64()*side, west+r.Float64()*side, 1+i%9, r.IntN(20000), r.IntN(100))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func run(n, conc, poolSize int, dur time.Duration, boxDeg float64, admin, jsonOut string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	_, _ = conn.Exec(ctx, `DROP DATABASE IF EXISTS arr_bench_records WITH (FORCE)`)
	if _, err := conn.Exec(ctx, `CREATE DATABASE arr_bench_records`); err != nil {
		return err
	}
	conn.Close(ctx)
	cfg, err := pgxpool.ParseConfig(migratetest.WithDatabase(admin, "arr_bench_records"))
	if err != nil {
		return err
	}
	cfg.MaxConns = int32(poolSize)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrations.Apply(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		return err
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, parcels.Projection{})
	if err != nil {
		return err
	}
	if err := runner.Setup(ctx); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "arr-bench-records-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	csvPath := filepath.Join(dir, "synthetic.csv")
	log.Printf("generating %d synthetic parcels (county 99999, clearly synthetic)", n)
	if err := generate(csvPath, n); err != nil {
		return err
	}
	src, err := layerfile.Open(csvPath, layerfile.Options{County: "99999"})
	if err != nil {
		return err
	}
	defer src.Close()
	h, err := commands.NewLoadLayerHandler(store, time.Now)
	if err != nil {
		return err
	}
	res := result{Parcels: n, Concurrency: conc, LoadAvgStart: loadAvg()}
	start := time.Now()
	lr, err := h.Handle(ctx, commands.LoadLayer{Layer: "vacant", Counties: []string{"99999"}, SourceURL: "https://example.org/synthetic",
		SourceDate: "2026-06-01", File: "synthetic.csv"}, src)
	if err != nil {
		return err
	}
	res.AppendSeconds = time.Since(start).Seconds()
	res.AppendRowsPerS = float64(lr.RowsLoaded) / res.AppendSeconds
	log.Printf("appended %d rows in %d chunks: %.2fs, %.0f rows/s", lr.RowsLoaded, lr.Chunks, res.AppendSeconds, res.AppendRowsPerS)
	applyStart := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if err := runner.WaitFor(wctx, parcels.Name, lr.Position); err != nil {
		return err
	}
	res.ApplySeconds = time.Since(applyStart).Seconds()
	res.EndToEndRowsPS = float64(lr.RowsLoaded) / time.Since(start).Seconds()
	log.Printf("parcels projection applied the load in %.2fs (end to end %.0f rows/s)", res.ApplySeconds, res.EndToEndRowsPS)
	// Measure the queries in steady state, not in the wake of the load:
	// VACUUM sets the hint bits and visibility map the load left unset
	// (else the first queries over each page write it), ANALYZE gives the
	// planner the new statistics, CHECKPOINT flushes the load's dirty
	// pages. Autovacuum and the checkpointer do the same on their own
	// within minutes.
	for _, sql := range []string{`VACUUM (ANALYZE) rm_parcels.parcels`, `CHECKPOINT`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}

	// Every request is counted by the real per-IP limiter on PostgreSQL,
	// as in arr serve. The clients are conc distinct IP addresses
	// (127.0.1.x), like real public traffic; the limit is raised (as
	// ARR_PUBLIC_RATE_LIMIT would) so that they are not refused.
	limiter, err := ratelimit.NewPostgres(pool, ratelimit.PostgresConfig{})
	if err != nil {
		return err
	}
	coalesced, err := ratelimit.Coalesce(limiter, ratelimit.CoalesceConfig{})
	if err != nil {
		return err
	}
	quota, err := ratelimit.New(coalesced, ratelimit.Config{PublicPerHour: 1 << 40})
	if err != nil {
		return err
	}
	gaz, err := demodata.LoadGazetteer()
	if err != nil {
		return err
	}
	application, err := app.New(pool, commands.Commands{})
	if err != nil {
		return err
	}
	application.Queries.Gazetteer = gaz
	handler, err := records.New(httpx.Deps{App: application, Quota: quota, Version: "bench"})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln) //nolint:errcheck
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/api/v1/parcels?bbox="
	clientFrom := func(w int) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+w%250))}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}}
	}
	var (
		mu        sync.Mutex
		lat       []time.Duration
		features  atomic.Int64
		failures  atomic.Int64
		wg        sync.WaitGroup
		deadline  = time.Now().Add(dur)
		loadStart = time.Now()
	)
	if profilePath != "" {
		f, err := os.Create(profilePath)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			client := clientFrom(int(seed))
			r := rand.New(rand.NewPCG(seed, 7))
			var mine []time.Duration
			for time.Now().Before(deadline) {
				x, y := west+r.Float64()*(side-boxDeg), south+r.Float64()*(side-boxDeg)
				u := fmt.Sprintf("%s%.5f,%.5f,%.5f,%.5f", base, x, y, x+boxDeg, y+boxDeg)
				t0 := time.Now()
				resp, err := client.Get(u)
				if err != nil {
					failures.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t0))
				// The load generator shares the 2 cores with the server:
				// it reads the count from the body's tail and decodes
				// one response in 50 in full.
				count, ok := tailCount(body)
				if resp.StatusCode != 200 || !ok {
					failures.Add(1)
					continue
				}
				if len(mine)%50 == 1 {
					var fc struct {
						Count    int               `json:"count"`
						Features []json.RawMessage `json:"features"`
					}
					if json.Unmarshal(body, &fc) != nil || fc.Count != count || len(fc.Features) != count {
						failures.Add(1)
						continue
					}
				}
				fc := struct{ Count int }{count}
				features.Add(int64(fc.Count))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}(uint64(w))
	}
	wg.Wait()
	elapsed := time.Since(loadStart)
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	res.Requests = len(lat)
	res.RequestsPerSec = float64(len(lat)) / elapsed.Seconds()
	res.P50ms, res.P99ms = pct(0.50), pct(0.99)
	if len(lat) > 0 {
		res.FeaturesPerResp = float64(features.Load()) / float64(len(lat))
	}
	if f := failures.Load(); f > 0 {
		return fmt.Errorf("%d bbox requests failed", f)
	}
	res.LoadAvgEnd = loadAvg()
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(count), 0) FROM quota_counters WHERE bucket LIKE 'records:ip:%'`).Scan(&res.Counted); err != nil {
		return err
	}
	x, y := west+side/2, south+side/2
	rows, err := pool.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS) SELECT county, apn, address, ST_X(geom), ST_Y(geom), source_url, layers, signals::text
		FROM (SELECT county, apn, address, geom, source_url, layers, signals
		FROM rm_parcels.parcels WHERE geom && ST_MakeEnvelope($1, $2, $3, $4, 4326) ORDER BY county, apn LIMIT 101) page ORDER BY county, apn`, x, y, x+boxDeg, y+boxDeg)
	if err != nil {
		return err
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		res.Explain += line + "\n"
	}
	rows.Close()
	fmt.Printf("synthetic county: %d parcels (FIPS 99999, clearly synthetic)\n", n)
	fmt.Printf("bulk load through the event log: append %.2fs = %.0f rows/s; parcels projection apply %.2fs; end to end %.0f rows/s\n",
		res.AppendSeconds, res.AppendRowsPerS, res.ApplySeconds, res.EndToEndRowsPS)
	fmt.Printf("bbox %.3f° boxes, %d concurrent, %s: %d requests, %.0f req/s, p50 %.2f ms, p99 %.2f ms, %.0f features/response (limit 100)\n",
		boxDeg, conc, dur, res.Requests, res.RequestsPerSec, res.P50ms, res.P99ms, res.FeaturesPerResp)
	fmt.Printf("requests counted by the per-IP rate limiter: %d; load average at start %s, at end %s\n", res.Counted, res.LoadAvgStart, res.LoadAvgEnd)
	fmt.Printf("EXPLAIN ANALYZE of one bbox query:\n%s", res.Explain)
	if jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		return os.WriteFile(jsonOut, b, 0o644)
	}
	return nil
}
