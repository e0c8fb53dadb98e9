package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// result is the medians of one measurement over its runs.
type result struct {
	System          string   `json:"system"`
	Writers         int      `json:"writers"`
	Runs            []sample `json:"runs"`
	MedianEventsSec float64  `json:"median_events_per_sec"`
	MinEventsSec    float64  `json:"min_events_per_sec"`
	MaxEventsSec    float64  `json:"max_events_per_sec"`
	MedianP50ms     float64  `json:"median_p50_ms"`
	MedianP99ms     float64  `json:"median_p99_ms"`
}

type bulkResult struct {
	Runs            []bulkSample `json:"runs"`
	ChunkEvents     int          `json:"chunk_events"`
	StreamEvents    int          `json:"events_per_stream"`
	MedianEventsSec float64      `json:"median_events_per_sec"`
	MinEventsSec    float64      `json:"min_events_per_sec"`
	MaxEventsSec    float64      `json:"max_events_per_sec"`
}

type summary struct {
	Started   time.Time          `json:"started"`
	Machine   map[string]string  `json:"machine"`
	Server    map[string]string  `json:"server"`
	Settings  map[string]string  `json:"settings"`
	Duration  string             `json:"duration_per_run"`
	RunsEach  int                `json:"runs_per_measurement"`
	Single    []*result          `json:"single_event"`
	Ratios    map[string]float64 `json:"ratio_arr_over_messagedb"`
	RatiosOwn map[string]float64 `json:"ratio_arr_over_messagedb_own_categories,omitempty"`
	Bulk      *bulkResult        `json:"bulk,omitempty"`
	Targets   map[string]string  `json:"targets"`
}

const (
	sysArr    = "arr"
	sysMDB    = "messagedb"
	sysMDBOwn = "messagedb-own-categories"
)

func run(ctx context.Context, cfg config) error {
	srv := server{adminURL: cfg.databaseURL}
	info, err := srv.info(ctx)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	sum := &summary{
		Started: time.Now().UTC(),
		Machine: map[string]string{"host": host, "cpus": strconv.Itoa(runtime.NumCPU()), "go": runtime.Version(), "goos": runtime.GOOS + "/" + runtime.GOARCH},
		Server:  info,
		Settings: map[string]string{
			"writers": fmt.Sprint(cfg.writers), "warmup": cfg.warmup.String(), "bulk_events": strconv.Itoa(cfg.bulkEvents),
			"bulk_chunk": strconv.Itoa(cfg.bulkChunk), "bulk_stream_events": strconv.Itoa(cfg.bulkPerStrm),
			"event_id_uuid_version": strconv.Itoa(cfg.idVersion), "arr_noop_before_commit": strconv.FormatBool(cfg.noopHook),
			"arr_max_batch_events": strconv.Itoa(cfg.maxBatch),
		},
		Duration: cfg.duration.String(),
		RunsEach: cfg.runs,
		Ratios:   map[string]float64{},
		Targets:  map[string]string{},
	}
	sum.Machine["loadavg_start"] = loadAvg()
	var tr *tracer
	if cfg.trace {
		tr = newTracer()
	}
	log := os.Stderr
	systems := []string{}
	if !cfg.skipArr {
		systems = append(systems, sysArr)
	}
	if cfg.messageDB != "" {
		systems = append(systems, sysMDB)
		if cfg.mdbOwnCats {
			systems = append(systems, sysMDBOwn)
		}
	}
	results := map[string]*result{}
	key := func(sys string, w int) string { return sys + "/" + strconv.Itoa(w) }
	for _, w := range cfg.writers {
		for _, sys := range systems {
			r := &result{System: sys, Writers: w}
			results[key(sys, w)] = r
			sum.Single = append(sum.Single, r)
		}
	}
	// Runs are interleaved (run 1 of everything, then run 2, ...) so that
	// drift on a shared machine hits every system alike.
	for run := 0; run < cfg.runs; run++ {
		for _, w := range cfg.writers {
			for _, sys := range systems {
				var s sample
				switch sys {
				case sysArr:
					s, err = arrSingle(ctx, cfg, srv, w, tr)
				case sysMDB:
					s, err = mdbSingle(ctx, cfg, srv, w, false)
				case sysMDBOwn:
					s, err = mdbSingle(ctx, cfg, srv, w, true)
				}
				if err != nil {
					return fmt.Errorf("%s at %d writers, run %d: %w", sys, w, run+1, err)
				}
				fmt.Fprintf(log, "run %d/%d  %-26s %3d writers  %9.0f events/s  p50 %7.2f ms  p99 %7.2f ms\n", run+1, cfg.runs, sys, w, s.EventsPerSec, s.P50ms, s.P99ms)
				if sys == sysArr && tr != nil {
					tr.report(log, fmt.Sprintf("arr, %d writers, run %d", w, run+1), s.calls)
				}
				r := results[key(sys, w)]
				r.Runs = append(r.Runs, s)
			}
		}
		if cfg.bulkEvents > 0 {
			b, err := arrBulk(ctx, cfg, srv, run, tr)
			if err != nil {
				return fmt.Errorf("bulk, run %d: %w", run+1, err)
			}
			fmt.Fprintf(log, "run %d/%d  %-26s %9.0f events/s  (%d events in %.2fs, chunk p50 %.0f ms)\n", run+1, cfg.runs, "arr bulk", b.EventsPerSec, b.Events, b.Seconds, b.ChunkP50ms)
			if tr != nil {
				tr.report(log, fmt.Sprintf("arr bulk, run %d", run+1), b.Events)
			}
			if sum.Bulk == nil {
				sum.Bulk = &bulkResult{ChunkEvents: cfg.bulkChunk, StreamEvents: cfg.bulkPerStrm}
			}
			sum.Bulk.Runs = append(sum.Bulk.Runs, b)
		}
	}
	for _, r := range sum.Single {
		var eps, p50, p99 []float64
		for _, s := range r.Runs {
			eps, p50, p99 = append(eps, s.EventsPerSec), append(p50, s.P50ms), append(p99, s.P99ms)
		}
		r.MedianEventsSec, r.MedianP50ms, r.MedianP99ms = median(eps), median(p50), median(p99)
		r.MinEventsSec, r.MaxEventsSec = minMax(eps)
	}
	for _, w := range cfg.writers {
		a, m, o := results[key(sysArr, w)], results[key(sysMDB, w)], results[key(sysMDBOwn, w)]
		if a != nil && m != nil && m.MedianEventsSec > 0 {
			sum.Ratios[strconv.Itoa(w)] = a.MedianEventsSec / m.MedianEventsSec
		}
		if a != nil && o != nil && o.MedianEventsSec > 0 {
			if sum.RatiosOwn == nil {
				sum.RatiosOwn = map[string]float64{}
			}
			sum.RatiosOwn[strconv.Itoa(w)] = a.MedianEventsSec / o.MedianEventsSec
		}
	}
	if sum.Bulk != nil {
		var eps []float64
		for _, b := range sum.Bulk.Runs {
			eps = append(eps, b.EventsPerSec)
		}
		sum.Bulk.MedianEventsSec = median(eps)
		sum.Bulk.MinEventsSec, sum.Bulk.MaxEventsSec = minMax(eps)
		sum.Targets["bulk >= 200k events/s"] = verdict(sum.Bulk.MedianEventsSec >= 200_000, fmt.Sprintf("%.0f", sum.Bulk.MedianEventsSec))
	}
	if r, ok := sum.Ratios["64"]; ok {
		sum.Targets["arr >= 5x Message DB at 64 writers"] = verdict(r >= 5, fmt.Sprintf("%.2fx", r))
	}
	sum.Machine["loadavg_end"] = loadAvg()
	printTable(os.Stdout, sum)
	return writeJSON(cfg.jsonOut, sum)
}

// loadAvg is /proc/loadavg's first three fields, a hint of how busy the
// machine was besides the benchmark ("" where there is none).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func verdict(ok bool, v string) string {
	if ok {
		return "met (" + v + ")"
	}
	return "NOT met (" + v + ")"
}

func minMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

func printTable(w io.Writer, s *summary) {
	fmt.Fprintf(w, "\nevent store benchmark, %s, %s CPUs, %s; %d runs of %s each, medians (min-max)\n", s.Started.Format(time.RFC3339), s.Machine["cpus"], s.Server["version"][:min(len(s.Server["version"]), 16)], s.RunsEach, s.Duration)
	fmt.Fprintf(w, "load average at start %s, at end %s\n", s.Machine["loadavg_start"], s.Machine["loadavg_end"])
	fmt.Fprintf(w, "%-26s %8s %14s %20s %10s %10s\n", "system", "writers", "events/s", "(min-max)", "p50 ms", "p99 ms")
	for _, r := range s.Single {
		fmt.Fprintf(w, "%-26s %8d %14.0f %20s %10.2f %10.2f\n", r.System, r.Writers, r.MedianEventsSec, fmt.Sprintf("(%.0f-%.0f)", r.MinEventsSec, r.MaxEventsSec), r.MedianP50ms, r.MedianP99ms)
	}
	if len(s.Ratios) > 0 {
		fmt.Fprintln(w, "\nratio arr / Message DB (streams bench-<writer>, one category):")
		for _, r := range s.Single {
			if v, ok := s.Ratios[strconv.Itoa(r.Writers)]; ok && r.System == sysArr {
				fmt.Fprintf(w, "  %3d writers: %6.2fx\n", r.Writers, v)
			}
		}
	}
	if len(s.RatiosOwn) > 0 {
		fmt.Fprintln(w, "ratio arr / Message DB (one category per writer, no shared lock):")
		for _, r := range s.Single {
			if v, ok := s.RatiosOwn[strconv.Itoa(r.Writers)]; ok && r.System == sysArr {
				fmt.Fprintf(w, "  %3d writers: %6.2fx\n", r.Writers, v)
			}
		}
	}
	if s.Bulk != nil {
		fmt.Fprintf(w, "\narr bulk (AppendBulk, %d events per call, %d per stream): %.0f events/s (%.0f-%.0f)\n", s.Bulk.ChunkEvents, s.Bulk.StreamEvents, s.Bulk.MedianEventsSec, s.Bulk.MinEventsSec, s.Bulk.MaxEventsSec)
	}
	for k, v := range s.Targets {
		fmt.Fprintf(w, "target %s: %s\n", k, v)
	}
}

func writeJSON(path string, s *summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding summary: %w", err)
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}
