package parcels_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	return nil
}

// TestExportIsOneSnapshot: an export reads every parcel of its county in
// keyset pages, with each parcel's layer records and their source URLs,
// and a load that completes while it runs changes nothing in it: the
// count, the layers and every page are of the snapshot it began with.
func TestExportIsOneSnapshot(t *testing.T) {
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
	load := func(layer, url string, apns ...string) {
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
	if filtered.h.Parcels != 3 || len(filtered.got) != 3 || filtered.got[0].APN != "A2" {
		t.Fatalf("export of tax_sale: header %+v, %+v", filtered.h, filtered.got)
	}
}
