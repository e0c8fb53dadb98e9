package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/answerdocs"
)

// manuals are the pages the synthetic corpus draws sections from.
var manuals = []struct{ root, pages string }{
	{"/usr/share/doc/python3.11/html", "scripts/eval/pages.txt"},
	{"/usr/share/doc/git/html", "scripts/eval/git/pages.txt"},
}

// load builds the corpus and reports the time to index it and to add one
// page afterwards.
func load(ctx context.Context, admin string, args []string) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	pages := fs.Int("pages", 10000, "synthetic pages")
	db := fs.String("db", "arr_bench_local", "database (dropped and made again)")
	batch := fs.Int("batch", 500, "pages per transaction (a projection batch)")
	adds := fs.Int("adds", 20, "single pages added afterwards, each its own transaction")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sections, titles, err := manualSections()
	if err != nil {
		return err
	}
	pool, err := freshDatabase(ctx, admin, *db)
	if err != nil {
		return err
	}
	defer pool.Close()
	r := rand.New(rand.NewPCG(1, 2))
	page := func(i int) answer.DocumentIndexed {
		d := answer.DocumentIndexed{DocID: fmt.Sprintf("syn%07d", i), Title: fmt.Sprintf("%s (%d)", titles[r.IntN(len(titles))], i),
			IndexedAt: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)}
		d.URL, d.Origin = "http://127.0.0.1/"+d.DocID, "http://127.0.0.1/"+d.DocID
		for range 3 {
			d.Sections = append(d.Sections, sections[r.IntN(len(sections))])
		}
		d.ContentHash = answer.ContentHash(d.Title, d.Sections)
		return d
	}
	start := time.Now()
	for lo := 0; lo < *pages; lo += *batch {
		var docs []answer.DocumentIndexed
		var pos []int64
		for i := lo; i < min(lo+*batch, *pages); i++ {
			docs, pos = append(docs, page(i)), append(pos, int64(i+1))
		}
		if err := store(ctx, pool, docs, pos); err != nil {
			return err
		}
	}
	took := time.Since(start)
	var passages int64
	if err := pool.QueryRow(ctx, `SELECT passages FROM rm_answer_docs.corpus`).Scan(&passages); err != nil {
		return err
	}
	var addTimes []time.Duration
	for j := range *adds {
		t := time.Now()
		if err := store(ctx, pool, []answer.DocumentIndexed{page(*pages + j)}, []int64{int64(*pages + j + 1)}); err != nil {
			return err
		}
		addTimes = append(addTimes, time.Since(t))
	}
	sort.Slice(addTimes, func(a, b int) bool { return addTimes[a] < addTimes[b] })
	var size string
	if err := pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_database_size(current_database()))`).Scan(&size); err != nil {
		return err
	}
	fmt.Printf("load: %d pages, %d passages, indexed in %s (%.0f pages/s); add one page: p50 %s, max %s (%d adds); database %s\n",
		*pages, passages, took.Round(time.Millisecond), float64(*pages)/took.Seconds(),
		addTimes[len(addTimes)/2].Round(100*time.Microsecond), addTimes[len(addTimes)-1].Round(100*time.Microsecond), len(addTimes), size)
	return nil
}

// store writes docs in one transaction, as a projection batch does.
func store(ctx context.Context, pool *pgxpool.Pool, docs []answer.DocumentIndexed, pos []int64) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO rm_answer_docs`); err != nil {
			return err
		}
		return answerdocs.Store(ctx, tx, docs, pos)
	})
}

// freshDatabase makes database name afresh with an empty answer_docs
// read model, indexes included.
func freshDatabase(ctx context.Context, admin, name string) (*pgxpool.Pool, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	for _, sql := range []string{`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`, `CREATE DATABASE ` + name} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return nil, err
		}
	}
	pool, err := pgxpool.New(ctx, migratetest.WithDatabase(admin, name))
	if err != nil {
		return nil, err
	}
	spec := answerdocs.Projection{}.Spec()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA rm_answer_docs; SET search_path TO rm_answer_docs; `+spec.DDL+spec.DeferredDDL+`; RESET search_path`); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// manualSections are the sections of the manuals' pages and their titles.
func manualSections() ([]answer.Section, []string, error) {
	var sections []answer.Section
	var titles []string
	for _, m := range manuals {
		f, err := os.Open(m.pages)
		if err != nil {
			return nil, nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			page := strings.TrimSpace(sc.Text())
			if page == "" || strings.HasPrefix(page, "#") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(m.root, page))
			if err != nil {
				continue
			}
			p, err := webpage.Extract(webpage.Raw{URL: "http://127.0.0.1/" + page, ContentType: "text/html", Body: b})
			if err != nil {
				continue
			}
			titles = append(titles, p.Title)
			sections = append(sections, research.Sections(p)...)
		}
		f.Close()
	}
	if len(sections) == 0 {
		return nil, nil, fmt.Errorf("no manual pages found (install python3.11-doc and git-doc)")
	}
	return sections, titles, nil
}
