// Command records benchmarks the records service on a generated,
// clearly synthetic county (FIPS 99999, APNs SYN-…, addresses "… SYNTHETIC
// ST"; for load only): the bulk load of N parcels through the event log
// (append, then the parcels projection applying it), then the bbox query
// (random boxes, limit 100) at each concurrency through the real HTTP
// handler and, with -peer, through CrunchyData's pg_featureserv serving the
// same rm_parcels.parcels table (after checking that both answer the same
// features), in rounds with the servers taking turns; then EXPLAIN of the
// query. Run it through scripts/bench/recordsapi.sh.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
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
	"github.com/arr-dev/arr/readapi/recordsapi"
)

type result struct {
	Parcels        int         `json:"parcels"`
	AppendSeconds  float64     `json:"append_seconds"`
	AppendRowsPerS float64     `json:"append_rows_per_second"`
	ApplySeconds   float64     `json:"projection_apply_seconds"`
	EndToEndRowsPS float64     `json:"end_to_end_rows_per_second"`
	OGRSeconds     float64     `json:"ogr2ogr_seconds,omitempty"`
	LoadRounds     []loadRound `json:"load_rounds"`
	BoxDegrees     float64     `json:"box_degrees"`
	Duration       string      `json:"duration_per_level"`
	Peer           string      `json:"peer,omitempty"`
	CheckedBoxes   int         `json:"boxes_checked_equal"`
	CheckedFeats   int         `json:"features_checked_equal"`
	Levels         []level     `json:"levels"`
	Summaries      []summary   `json:"medians"`
	Explain        string      `json:"explain"`
	LoadAvgStart   string      `json:"load_average_start"`
	LoadAvgEnd     string      `json:"load_average_end"`
	Counted        int64       `json:"requests_counted_by_rate_limiter"`
	TileLevels     []tileLevel `json:"tile_levels,omitempty"`
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

// options are the command's flags.
type options struct {
	parcels, pool, rounds int
	levels                []int
	dur                   time.Duration
	boxDeg                float64
	admin, jsonOut        string
	database              string
	cpuProfile            string
	peer, peerConfig      string
	peerURL               string
	tileserv, tileservCfg string
	tileservURL           string
	tileClients           int
	ogr2ogr               string
	// loadOnly stops after the load rounds; steps logs each step of the
	// parcels projection's publishing.
	loadOnly, steps bool
}

func main() {
	var o options
	flag.IntVar(&o.parcels, "parcels", 1_000_000, "synthetic parcels to load")
	conc := flag.String("concurrency", "1,64", "concurrent bbox clients: a comma-separated list of levels")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds: each measures every level of each server, the servers taking turns; the figures are the medians")
	flag.DurationVar(&o.dur, "duration", 10*time.Second, "how long each server is loaded at each level in each round")
	flag.Float64Var(&o.boxDeg, "box", 0.01, "side of each query's bbox, degrees")
	flag.StringVar(&o.admin, "database-url", migratetest.AdminURL(), "PostgreSQL server (the database -database is made on it)")
	flag.StringVar(&o.database, "database", "arr_bench_records", "the bench's database, made anew on the server (its name: letters, digits and _)")
	flag.StringVar(&o.jsonOut, "json", "", "write the result as JSON here")
	flag.IntVar(&o.pool, "pool", 16, "PostgreSQL connections (arr serve's default is 16; give the peer's DbPoolMaxConns the same)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the bbox phase here")
	flag.StringVar(&o.peer, "peer", "", "pg_featureserv binary to serve the same table beside arr (none: arr only)")
	flag.StringVar(&o.peerConfig, "peer-config", "", "pg_featureserv's config file (recordsapi.sh writes it)")
	flag.StringVar(&o.peerURL, "peer-url", "", "pg_featureserv's base URL, as its config file has it listen (http://127.0.0.1:port)")
	flag.StringVar(&o.tileserv, "tileserv", "", "pg_tileserv binary to serve the same table's tiles beside arr (none: arr only)")
	flag.StringVar(&o.tileservCfg, "tileserv-config", "", "pg_tileserv's config file (records.sh writes it)")
	flag.StringVar(&o.tileservURL, "tileserv-url", "", "pg_tileserv's base URL, as its config file has it listen (http://127.0.0.1:port)")
	flag.IntVar(&o.tileClients, "tile-clients", 64, "panning map clients of the tile phase (0: no tile phase)")
	flag.StringVar(&o.ogr2ogr, "ogr2ogr", "", "GDAL's ogr2ogr binary, to load the same rows into PostGIS beside arr in each round (none: arr only)")
	flag.BoolVar(&o.loadOnly, "load-only", false, "measure the bulk load only: no queries, tiles or peers after the load rounds")
	flag.BoolVar(&o.steps, "load-steps", false, "log the time of each step of the parcels projection's publishing of the load")
	flag.Parse()
	for _, s := range strings.Split(*conc, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 1 {
			log.Fatalf("-concurrency: %q is not a positive number", s)
		}
		o.levels = append(o.levels, c)
	}
	if !regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`).MatchString(o.database) {
		log.Fatalf("-database: %q is not a name of letters, digits and _", o.database)
	}
	if o.rounds < 1 {
		log.Fatal("-rounds: at least 1")
	}
	if o.peer != "" && (o.peerConfig == "" || o.peerURL == "") {
		log.Fatal("-peer needs -peer-config and -peer-url")
	}
	if o.tileserv != "" && (o.tileservCfg == "" || o.tileservURL == "") {
		log.Fatal("-tileserv needs -tileserv-config and -tileserv-url")
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

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

func run(o options) error {
	ctx := context.Background()
	res := result{Parcels: o.parcels, BoxDegrees: o.boxDeg, Duration: o.dur.String(), Peer: o.peer, LoadAvgStart: loadAvg()}
	pool, err := loadRounds(ctx, o, &res)
	if err != nil {
		return err
	}
	defer pool.Close()
	if o.loadOnly {
		return reportLoadOnly(o, &res)
	}
	arrBase, stopArr, err := serveArr(pool)
	if err != nil {
		return err
	}
	defer stopArr()
	targets := []target{arrTarget(arrBase)}
	if o.peer != "" {
		dir, err := os.MkdirTemp("", "arr-bench-pg-featureserv-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		stopPeer, err := startPeer(o.peer, o.peerConfig, o.peerURL, filepath.Join(dir, "pg_featureserv.log"))
		if err != nil {
			return err
		}
		defer stopPeer()
		peer := peerTarget(o.peerURL)
		// Both must answer the same features before their speeds mean
		// anything.
		const boxes = 20
		n, err := sameFeatures(ctx, targets[0], peer, boxes, o.boxDeg)
		if err != nil {
			return fmt.Errorf("arr and pg_featureserv differ: %w", err)
		}
		res.CheckedBoxes, res.CheckedFeats = boxes, n
		log.Printf("arr and pg_featureserv answer the same features for %d random boxes (%d features: ids in order, properties, coordinates)", boxes, n)
		targets = append(targets, peer)
	}
	if err := rounds(o, targets, &res); err != nil {
		return err
	}
	// arr's searches beyond the bbox, at the most clients asked for.
	if err := rounds(options{rounds: o.rounds, levels: []int{slices.Max(o.levels)}, dur: o.dur, boxDeg: o.boxDeg},
		arrSearchTargets(arrBase), &res); err != nil {
		return err
	}
	if err := tilePhase(o, arrBase, &res); err != nil {
		return err
	}
	res.LoadAvgEnd = loadAvg()
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(count), 0) FROM quota_counters WHERE bucket LIKE 'records:ip:%'`).Scan(&res.Counted); err != nil {
		return err
	}
	if res.Explain, err = explain(ctx, pool, o.boxDeg); err != nil {
		return err
	}
	report(o, targets, &res)
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		return os.WriteFile(o.jsonOut, b, 0o644)
	}
	return nil
}

// freshDatabase makes the database name anew and migrates it.
func freshDatabase(ctx context.Context, admin, name string, poolSize int) (*pgxpool.Pool, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, err
	}
	_, _ = conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		return nil, err
	}
	conn.Close(ctx)
	cfg, err := pgxpool.ParseConfig(migratetest.WithDatabase(admin, name))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(poolSize)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := migrations.Apply(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// loadCounty loads the synthetic county's CSV file through the event log
// and waits for the parcels projection to apply it: the append's and the
// apply's seconds (the apply from the append's end; the projection stages
// rows while the append runs).
func loadCounty(ctx context.Context, pool *pgxpool.Pool, csvPath string, steps bool) (appendSecs, applySecs float64, err error) {
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		return 0, 0, err
	}
	var p parcels.Projection
	if steps {
		p.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, p)
	if err != nil {
		return 0, 0, err
	}
	if err := runner.Setup(ctx); err != nil {
		return 0, 0, err
	}
	src, err := layerfile.Open(csvPath, layerfile.Options{County: "99999"})
	if err != nil {
		return 0, 0, err
	}
	defer src.Close()
	h, err := commands.NewLoadLayerHandler(store, time.Now)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	lr, err := h.Handle(ctx, commands.LoadLayer{Layer: "vacant", Counties: []string{"99999"}, SourceURL: "https://example.org/synthetic",
		SourceDate: "2026-06-01", File: "synthetic.csv"}, src)
	if err != nil {
		return 0, 0, err
	}
	appendSecs = time.Since(start).Seconds()
	log.Printf("appended %d rows in %d chunks: %.2fs, %.0f rows/s", lr.RowsLoaded, lr.Chunks, appendSecs, float64(lr.RowsLoaded)/appendSecs)
	applyStart := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if err := runner.WaitFor(wctx, parcels.Name, lr.Position); err != nil {
		return 0, 0, err
	}
	applySecs = time.Since(applyStart).Seconds()
	log.Printf("parcels projection applied the load in %.2fs (end to end %.0f rows/s)", applySecs, float64(lr.RowsLoaded)/time.Since(start).Seconds())
	return appendSecs, applySecs, nil
}

// serveArr serves the records service's real HTTP handler on loopback.
// Every request is counted by the real per-IP limiter on PostgreSQL, as in
// arr serve; the limit is raised (as ARR_PUBLIC_RATE_LIMIT would) so that
// the clients, distinct IP addresses, are not refused.
func serveArr(pool *pgxpool.Pool) (string, func(), error) {
	limiter, err := ratelimit.NewPostgres(pool, ratelimit.PostgresConfig{})
	if err != nil {
		return "", nil, err
	}
	coalesced, err := ratelimit.Coalesce(limiter, ratelimit.CoalesceConfig{})
	if err != nil {
		return "", nil, err
	}
	quota, err := ratelimit.New(coalesced, ratelimit.Config{PublicPerHour: 1 << 40})
	if err != nil {
		return "", nil, err
	}
	gaz, err := demodata.LoadGazetteer()
	if err != nil {
		return "", nil, err
	}
	application, err := app.New(pool, commands.Commands{})
	if err != nil {
		return "", nil, err
	}
	// A cursor key of the bench: it is the only process serving its database.
	application.CursorKey = bytes.Repeat([]byte{1}, 32)
	application.Queries.Gazetteer = gaz
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	base := "http://" + ln.Addr().String()
	// The OGC API's links are on the service's public base URL.
	site, err := httpx.NewSite(base, ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return "", nil, err
	}
	handler, err := recordsapi.New(httpx.Deps{App: application, Quota: quota, Version: "bench", Site: site})
	if err != nil {
		_ = ln.Close()
		return "", nil, err
	}
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln) //nolint:errcheck
	return base, func() { srv.Close() }, nil
}

// rounds measures every level of every target, -rounds times; within a
// round the targets take turns, and which goes first alternates by round.
func rounds(o options, targets []target, res *result) error {
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for r := 1; r <= o.rounds; r++ {
		for _, conc := range o.levels {
			order := slices.Clone(targets)
			if r%2 == 0 {
				slices.Reverse(order)
			}
			for _, t := range order {
				l, err := measure(t, conc, o.dur, o.boxDeg)
				if err != nil {
					return err
				}
				l.Round = r
				res.Levels = append(res.Levels, l)
				log.Printf("round %d, %s at %d clients: %d requests, %.0f req/s, p50 %.2f ms, p99 %.2f ms, %.0f features/response",
					r, t.name, conc, l.Requests, l.RequestsPerSec, l.P50ms, l.P99ms, l.FeaturesPerResp)
			}
		}
	}
	for _, conc := range o.levels {
		for _, t := range targets {
			res.Summaries = append(res.Summaries, summarize(res.Levels, t.name, conc))
		}
	}
	return nil
}

func explain(ctx context.Context, pool *pgxpool.Pool, boxDeg float64) (string, error) {
	x, y := west+side/2, south+side/2
	rows, err := pool.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS) SELECT county, apn, address, ST_X(geom), ST_Y(geom), source_url, layers, signals::text
		FROM (SELECT county, apn, address, geom, source_url, layers, signals
		FROM rm_parcels.parcels WHERE geom && ST_MakeEnvelope($1, $2, $3, $4, 4326)
		AND ST_X(geom) BETWEEN $1 AND $3 AND ST_Y(geom) BETWEEN $2 AND $4 ORDER BY county, apn LIMIT 101) page ORDER BY county, apn`, x, y, x+boxDeg, y+boxDeg)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		out += line + "\n"
	}
	return out, rows.Err()
}

func report(o options, targets []target, res *result) {
	fmt.Printf("synthetic county: %d parcels (FIPS 99999, clearly synthetic)\n", res.Parcels)
	reportLoad(o, res)
	if res.CheckedBoxes > 0 {
		fmt.Printf("arr and pg_featureserv answered the same features for %d random boxes (%d features: ids in order, properties, coordinates)\n",
			res.CheckedBoxes, res.CheckedFeats)
	}
	fmt.Printf("bbox %.3f° random boxes, limit 100, %s per level, medians of %d rounds (servers taking turns):\n", o.boxDeg, o.dur, o.rounds)
	fmt.Printf("%-16s %8s %10s %10s %10s %10s\n", "server", "clients", "req/s", "p50 ms", "p99 ms", "features")
	for _, s := range res.Summaries {
		fmt.Printf("%-16s %8d %10.0f %10.2f %10.2f %10.1f\n", s.Server, s.Concurrency, s.RequestsPerSec, s.P50ms, s.P99ms, s.Features)
	}
	for _, name := range []string{"arr near", "arr address", "arr tile z14"} {
		s := summarize(res.Levels, name, slices.Max(o.levels))
		if s.Rounds > 0 {
			fmt.Printf("records %s at %d clients: p50 %.2f ms, p99 %.2f ms, %.0f req/s, %.1f features/response\n",
				strings.TrimPrefix(name, "arr "), s.Concurrency, s.P50ms, s.P99ms, s.RequestsPerSec, s.Features)
		}
	}
	fmt.Printf("requests counted by arr's per-IP rate limiter: %d; load average at start %s, at end %s\n", res.Counted, res.LoadAvgStart, res.LoadAvgEnd)
	fmt.Printf("EXPLAIN ANALYZE of one bbox query (arr's):\n%s", res.Explain)
	reportTiles(o, res)
	if len(targets) >= 2 && slices.Contains(o.levels, 64) {
		a, p := summarize(res.Levels, "arr", 64), summarize(res.Levels, "pg_featureserv", 64)
		fmt.Printf("records bbox at 64 clients: arr p99 %.2f ms, %.0f req/s; pg_featureserv p99 %.2f ms, %.0f req/s\n",
			a.P99ms, a.RequestsPerSec, p.P99ms, p.RequestsPerSec)
	}
	reportTilesLine(o, res)
	if o.ogr2ogr != "" {
		fmt.Printf("parcels load of %d rows: arr apply %.2f s; ogr2ogr %.2f s\n", res.Parcels, res.ApplySeconds, res.OGRSeconds)
	}
}
