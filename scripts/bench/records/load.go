package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// loadRound is one round of the bulk load: arr's (into a fresh database,
// through the event log) and ogr2ogr's (the same CSV file into a PostGIS
// table of that database).
type loadRound struct {
	Round         int     `json:"round"`
	AppendSeconds float64 `json:"append_seconds"`
	ApplySeconds  float64 `json:"projection_apply_seconds"`
	OGRSeconds    float64 `json:"ogr2ogr_seconds,omitempty"`
}

// loadRounds loads the synthetic county -rounds times, each time into a
// fresh database, with ogr2ogr loading the same file beside arr (which of
// the two goes first alternates by round), and keeps the last database
// for the queries. The result's load figures are the medians.
func loadRounds(ctx context.Context, o options, res *result) (*pgxpool.Pool, error) {
	dir, err := os.MkdirTemp("", "arr-bench-records-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	csvPath := filepath.Join(dir, "synthetic.csv")
	log.Printf("generating %d synthetic parcels (county 99999, clearly synthetic)", o.parcels)
	if err := generate(csvPath, o.parcels); err != nil {
		return nil, err
	}
	var pool *pgxpool.Pool
	for r := 1; r <= o.rounds; r++ {
		if pool != nil {
			pool.Close()
		}
		if pool, err = freshDatabase(ctx, o.admin, o.database, o.pool); err != nil {
			return nil, err
		}
		lr, err := loadRoundOnce(ctx, o, pool, csvPath, r)
		if err != nil {
			pool.Close()
			return nil, err
		}
		res.LoadRounds = append(res.LoadRounds, lr)
	}
	med := func(f func(loadRound) float64) float64 {
		v := make([]float64, len(res.LoadRounds))
		for i, l := range res.LoadRounds {
			v[i] = f(l)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	res.AppendSeconds = med(func(l loadRound) float64 { return l.AppendSeconds })
	res.ApplySeconds = med(func(l loadRound) float64 { return l.ApplySeconds })
	res.OGRSeconds = med(func(l loadRound) float64 { return l.OGRSeconds })
	res.AppendRowsPerS = float64(res.Parcels) / res.AppendSeconds
	res.EndToEndRowsPS = float64(res.Parcels) / (res.AppendSeconds + res.ApplySeconds)
	if o.loadOnly {
		return pool, nil
	}
	return pool, settle(ctx, pool)
}

// loadRoundOnce is round r of loadRounds, in pool's fresh database.
func loadRoundOnce(ctx context.Context, o options, pool *pgxpool.Pool, csvPath string, r int) (loadRound, error) {
	lr := loadRound{Round: r}
	arr := func() error {
		var err error
		lr.AppendSeconds, lr.ApplySeconds, err = loadCounty(ctx, pool, csvPath, o.steps)
		return err
	}
	ogr := func() error {
		if o.ogr2ogr == "" {
			return nil
		}
		var err error
		lr.OGRSeconds, err = ogrLoad(ctx, pool, o, csvPath)
		return err
	}
	steps := []func() error{arr, ogr}
	if r%2 == 0 {
		slices.Reverse(steps)
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return lr, err
		}
	}
	log.Printf("load round %d: arr append %.2fs, apply %.2fs; ogr2ogr %.2fs", r, lr.AppendSeconds, lr.ApplySeconds, lr.OGRSeconds)
	return lr, nil
}

// ogrTable is the table ogr2ogr loads (dropped after each round: the
// queries read arr's tables only).
const ogrTable = "ogr2ogr_parcels"

// ogrLoad has ogr2ogr load the CSV file arr loaded into a PostGIS table
// of the bench database (points from lon/lat in EPSG:4326, a GiST index,
// COPY, one transaction) and answers how long it took.
func ogrLoad(ctx context.Context, pool *pgxpool.Pool, o options, csvPath string) (float64, error) {
	cfg, err := pgconn.ParseConfig(o.admin)
	if err != nil {
		return 0, err
	}
	if h := cfg.Host; h != "127.0.0.1" && h != "::1" && h != "localhost" {
		return 0, fmt.Errorf("ogr2ogr: the database host %q is not loopback", h)
	}
	conn := fmt.Sprintf("PG:host=%s port=%d user=%s dbname=%s", quoteConninfo(cfg.Host), cfg.Port, quoteConninfo(cfg.User), quoteConninfo(o.database))
	cmd := exec.CommandContext(ctx, o.ogr2ogr, "-f", "PostgreSQL", conn, csvPath,
		"-oo", "X_POSSIBLE_NAMES=lon", "-oo", "Y_POSSIBLE_NAMES=lat", "-a_srs", "EPSG:4326", "-nlt", "POINT",
		"-nln", ogrTable, "-lco", "GEOMETRY_NAME=geom", "-lco", "SPATIAL_INDEX=GIST", "-gt", "unlimited", "-overwrite")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+cfg.Password, "PG_USE_COPY=YES")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("ogr2ogr: %w: %s", err, stderr.String())
	}
	secs := time.Since(start).Seconds()
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM public.`+ogrTable+` WHERE geom IS NOT NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting ogr2ogr's rows: %w", err)
	}
	if n != o.parcels {
		return 0, fmt.Errorf("ogr2ogr loaded %d rows with points, want %d", n, o.parcels)
	}
	if _, err := pool.Exec(ctx, `DROP TABLE public.`+ogrTable); err != nil {
		return 0, err
	}
	return secs, nil
}

// quoteConninfo quotes a libpq connection-string value.
func quoteConninfo(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// settle brings the loaded tables to steady state before the queries are
// measured, not in the wake of the load: VACUUM sets the hint bits and
// visibility map the load left unset (else the first queries over each
// page write it), ANALYZE gives the planner the new statistics,
// CHECKPOINT flushes the load's dirty pages. Autovacuum and the
// checkpointer do the same on their own within minutes.
func settle(ctx context.Context, pool *pgxpool.Pool) error {
	for _, sql := range []string{`VACUUM (ANALYZE) rm_parcels.parcels`, `CHECKPOINT`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// reportLoad prints the load's table: medians, and ogr2ogr's floor.
func reportLoad(o options, res *result) {
	fmt.Printf("parcels load of %d rows, medians of %d rounds (a fresh database each; arr and ogr2ogr taking turns):\n", res.Parcels, len(res.LoadRounds))
	fmt.Printf("%-34s %10s %12s\n", "loader", "seconds", "rows/s")
	row := func(name string, s float64) {
		fmt.Printf("%-34s %10.2f %12.0f\n", name, s, float64(res.Parcels)/s)
	}
	row("arr append (event log)", res.AppendSeconds)
	row("arr projection apply", res.ApplySeconds)
	row("arr end to end", res.AppendSeconds+res.ApplySeconds)
	if o.ogr2ogr != "" {
		row("ogr2ogr (PostGIS, COPY, GiST)", res.OGRSeconds)
		fmt.Printf("arr apply / ogr2ogr: %.2f×; arr end to end / ogr2ogr: %.2f×\n",
			res.ApplySeconds/res.OGRSeconds, (res.AppendSeconds+res.ApplySeconds)/res.OGRSeconds)
	}
}

// reportLoadOnly prints what a -load-only run measured: each round, the
// load's table and its summary line.
func reportLoadOnly(o options, res *result) error {
	for _, l := range res.LoadRounds {
		fmt.Printf("load round %d: arr append %.2f s, apply %.2f s; ogr2ogr %.2f s\n", l.Round, l.AppendSeconds, l.ApplySeconds, l.OGRSeconds)
	}
	reportLoad(o, res)
	fmt.Printf("parcels load of %d rows: arr apply %.2f s; ogr2ogr %.2f s\n", res.Parcels, res.ApplySeconds, res.OGRSeconds)
	if o.jsonOut == "" {
		return nil
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	return os.WriteFile(o.jsonOut, b, 0o644)
}
