package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/answerdocs"
)

// questionFiles are the questions searched.
var questionFiles = []string{"scripts/eval/questions.json", "scripts/eval/train/python.json", "scripts/eval/git/questions.json", "scripts/eval/train/git.json"}

// search asks every question through the engine (after one warm-up
// round) and prints p50/p99 and the process's peak RSS.
func search(ctx context.Context, admin string, args []string) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	db := fs.String("db", "arr_bench_local", "database")
	engine := fs.String("engine", "stored", "stored (the answer service's: GIN candidates, BM25F) or memory (the whole index in memory, as before)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var qs []string
	for _, f := range questionFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var list []struct{ Question string }
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, q := range list {
			qs = append(qs, q.Question)
		}
	}
	pool, err := pgxpool.New(ctx, migratetest.WithDatabase(admin, *db))
	if err != nil {
		return err
	}
	defer pool.Close()
	var s research.PassageSearcher
	switch *engine {
	case "stored":
		s = research.NewStored(answerdocs.NewQueries(pool), research.DefaultWeights)
	case "memory":
		s = research.NewLocal(answerdocs.NewQueries(pool), research.DefaultWeights)
	default:
		return fmt.Errorf("unknown engine %q", *engine)
	}
	t := time.Now()
	if _, _, err := s.SearchPassages(ctx, qs[0], 60); err != nil {
		return err
	}
	first := time.Since(t)
	for _, q := range qs { // warm-up round
		if _, _, err := s.SearchPassages(ctx, q, 60); err != nil {
			return err
		}
	}
	var lat []time.Duration
	for _, q := range qs {
		t := time.Now()
		if _, _, err := s.SearchPassages(ctx, q, 60); err != nil {
			return err
		}
		lat = append(lat, time.Since(t))
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	fmt.Printf("search %s: %d questions, 60 passages each: p50 %s, p99 %s; first search %s; peak RSS %s\n", *engine, len(lat),
		lat[len(lat)/2].Round(100*time.Microsecond), lat[len(lat)*99/100].Round(100*time.Microsecond), first.Round(time.Millisecond), peakRSS())
	return nil
}

// peakRSS is the process's peak resident set (VmHWM).
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
