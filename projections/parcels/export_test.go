package parcels_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
)

// exportSink collects an export; during runs once, after the header.
type exportSink struct {
	h      records.ExportHeader
	got    []records.ExportParcel
	pages  int
	during func() error
	// afterPage runs after each page is written.
	afterPage func() error
}

func (s *exportSink) Begin(h records.ExportHeader) error {
	s.h = h
	if s.during != nil {
		return s.during()
	}
	return nil
}

func (s *exportSink) Write(page []records.ExportParcel) error {
	s.pages++
	s.got = append(s.got, page...)
	if s.afterPage != nil {
		return s.afterPage()
	}
	return nil
}

// exportFixture is a database with the parcels projection set up, and
// load, which loads a layer naming apns in county 99999 and waits until
// the read model has it.
func exportFixture(t *testing.T) (*pgxpool.Pool, *projections.Runner, func(layer, url string, apns ...string)) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, parcels.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return pool, runner, func(layer, url string, apns ...string) {
		t.Helper()
		var b strings.Builder
		b.WriteString("apn,address,lat,lon,date,amount\n")
		for i, apn := range apns {
			fmt.Fprintf(&b, "%s,%d SYNTHETIC ST,40.06,-100.2%d,2026-01-15,1.00\n", apn, i+1, i)
		}
		path := filepath.Join(t.TempDir(), layer+".csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := layerfile.Open(path, layerfile.Options{County: "99999"})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		h, err := commands.NewLoadLayerHandler(store, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		lr, err := h.Handle(ctx, commands.LoadLayer{Layer: records.Layer(layer), Counties: []string{"99999"}, SourceURL: url,
			SourceDate: "2026-06-01", File: layer + ".csv"}, src)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := runner.WaitFor(wctx, parcels.Name, lr.Position); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExportIsOneSnapshot: an export reads every parcel of its county in
// keyset pages, with each parcel's layer records and their source URLs,
// and a load that completes while it runs changes nothing in it: the
// count, the layers and every page are of the snapshot it began with.
func TestExportIsOneSnapshot(t *testing.T) {
	pool, _, load := exportFixture(t)
	ctx := context.Background()
	load("vacant", "https://example.org/vacant", "A1", "A2", "A3", "A4", "A5")
	q := parcels.NewQueries(pool)
	eq := parcels.ExportQuery{County: "99999", PageSize: 2, StatementTimeout: 5 * time.Second}
	sink := &exportSink{during: func() error {
		// Completes while the export runs: two new parcels, and a second
		// layer naming one of the exported ones.
		load("tax_sale", "https://example.org/tax-sale", "A2", "B1", "B2")
		return nil
	}}
	if err := q.Export(ctx, eq, sink); err != nil {
		t.Fatal(err)
	}
	if sink.h.Parcels != 5 || strings.Join(sink.h.Layers, ",") != "vacant" || len(sink.got) != 5 || sink.pages != 3 {
		t.Fatalf("export during a load: header %+v, %d parcels in %d pages; want 5 vacant parcels in 3 pages", sink.h, len(sink.got), sink.pages)
	}
	for i, p := range sink.got {
		if want := fmt.Sprintf("A%d", i+1); p.APN != want || len(p.Signals) != 1 || p.Signals[0].Layer != "vacant" ||
			p.Signals[0].SourceURL != "https://example.org/vacant" || !p.Placed || p.SourceURL == "" {
			t.Errorf("parcel %d: %+v, want %s named by vacant only, placed, with source URLs", i, p, want)
		}
	}
	// After it, the next export sees the load; with a layers filter, only
	// the parcels it names.
	after := &exportSink{}
	if err := q.Export(ctx, eq, after); err != nil {
		t.Fatal(err)
	}
	if after.h.Parcels != 7 || strings.Join(after.h.Layers, ",") != "tax_sale,vacant" || len(after.got) != 7 {
		t.Fatalf("export after the load: header %+v, %d parcels", after.h, len(after.got))
	}
	if a2 := after.got[1]; a2.APN != "A2" || len(a2.Signals) != 2 || a2.Signals[0].Layer != "tax_sale" || a2.Signals[0].SourceURL != "https://example.org/tax-sale" {
		t.Errorf("A2 after the load: %+v", a2)
	}
	eq.Layers = []string{"tax_sale"}
	filtered := &exportSink{}
	if err := q.Export(ctx, eq, filtered); err != nil {
		t.Fatal(err)
	}
	// Its header lists the requested layers only.
	if filtered.h.Parcels != 3 || len(filtered.got) != 3 || filtered.got[0].APN != "A2" || strings.Join(filtered.h.Layers, ",") != "tax_sale" {
		t.Fatalf("export of tax_sale: header %+v, %+v", filtered.h, filtered.got)
	}
}

// TestExportDuringARebuild: a rebuild of the parcels read model that
// swaps in its new schema while an export is between two pages changes
// nothing in the export: every page comes from the tables and the
// snapshot it began with, and the file holds every parcel its header
// counts. The rebuild does not wait for the export either.
func TestExportDuringARebuild(t *testing.T) {
	pool, runner, load := exportFixture(t)
	ctx := context.Background()
	load("vacant", "https://example.org/vacant", "A1", "A2", "A3", "A4", "A5", "A6", "A7")
	load("tax_sale", "https://example.org/tax-sale", "A2", "A6")
	q := parcels.NewQueries(pool)
	eq := parcels.ExportQuery{County: "99999", PageSize: 2, StatementTimeout: 5 * time.Second}
	rebuilt := make(chan error, 1)
	sink := &exportSink{}
	sink.afterPage = func() error {
		if sink.pages != 1 {
			return nil
		}
		go func() { rebuilt <- runner.Rebuild(ctx, parcels.Name, nil) }()
		// Until the new schema is in (the retired one exists), or the
		// rebuild has ended.
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			var swapped bool
			if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname LIKE 'rm\_parcels\_\_retired%')`).Scan(&swapped); err != nil {
				return err
			}
			if swapped || len(rebuilt) > 0 {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return fmt.Errorf("the rebuild did not swap within a minute")
	}
	err := q.Export(ctx, eq, sink)
	if err != nil {
		t.Fatalf("export during a rebuild: %v", err)
	}
	if sink.h.Parcels != 7 || len(sink.got) != 7 {
		t.Fatalf("export during a rebuild: header counts %d parcels, the export sent %d in %d pages; want all 7", sink.h.Parcels, len(sink.got), sink.pages)
	}
	for i, p := range sink.got {
		if want := fmt.Sprintf("A%d", i+1); p.APN != want || len(p.Signals) == 0 {
			t.Errorf("parcel %d: %+v, want %s with its signals", i, p, want)
		}
	}
	if a6 := sink.got[5]; len(a6.Signals) != 2 {
		t.Errorf("A6 has %d signals, want tax_sale and vacant", len(a6.Signals))
	}
	select {
	case err := <-rebuilt:
		if err != nil {
			t.Fatalf("rebuild: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the rebuild did not end within a minute of the export")
	}
}
