package parcels_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
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

// mvtFeature is what the test reads of a vector tile's feature: its
// properties (string, double or bool values).
type mvtFeature map[string]any

// decodeMVT reads the features of a Mapbox vector tile's layer name
// (protobuf: Tile.layers 3; Layer.name 1, features 2, keys 3, values 4;
// Feature.tags 2, packed).
func decodeMVT(t *testing.T, b []byte, name string) []mvtFeature {
	t.Helper()
	var out []mvtFeature
	for _, l := range fields(t, b) {
		if l.num != 3 {
			continue
		}
		var lname string
		var keys []string
		var values []any
		var feats [][]byte
		for _, f := range fields(t, l.data) {
			switch f.num {
			case 1:
				lname = string(f.data)
			case 2:
				feats = append(feats, f.data)
			case 3:
				keys = append(keys, string(f.data))
			case 4:
				var v any
				for _, vf := range fields(t, f.data) {
					switch vf.num {
					case 1:
						v = string(vf.data)
					case 3:
						v = math.Float64frombits(vf.varint)
					case 4, 5:
						v = float64(vf.varint)
					case 7:
						v = vf.varint == 1
					}
				}
				values = append(values, v)
			}
		}
		if lname != name {
			continue
		}
		for _, fb := range feats {
			m := mvtFeature{}
			for _, f := range fields(t, fb) {
				if f.num == 4 { // a point: MoveTo(1), zigzag x, zigzag y
					g := []int64{}
					for p := f.data; len(p) > 0; {
						v, n := uvarint(p)
						g, p = append(g, int64(v>>1)^-int64(v&1)), p[n:]
					}
					if len(g) == 3 {
						m["_x"], m["_y"] = float64(g[1]), float64(g[2])
					}
				}
				if f.num != 2 {
					continue
				}
				var tags []uint64
				for p := f.data; len(p) > 0; {
					v, n := uvarint(p)
					tags, p = append(tags, v), p[n:]
				}
				for i := 0; i+1 < len(tags); i += 2 {
					m[keys[tags[i]]] = values[tags[i+1]]
				}
			}
			out = append(out, m)
		}
	}
	return out
}

type pbField struct {
	num    int
	varint uint64
	data   []byte
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, len(b)
}

func fields(t *testing.T, b []byte) []pbField {
	t.Helper()
	var out []pbField
	for len(b) > 0 {
		k, n := uvarint(b)
		b = b[n:]
		f := pbField{num: int(k >> 3)}
		switch k & 7 {
		case 0:
			f.varint, n = uvarint(b)
		case 1:
			var v uint64
			for i := 0; i < 8; i++ {
				v |= uint64(b[i]) << (8 * i)
			}
			f.varint, n = v, 8
		case 2:
			l, m := uvarint(b)
			f.data, n = b[m:m+int(l)], m+int(l)
		case 5:
			n = 4
		default:
			t.Fatalf("protobuf wire type %d", k&7)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out
}

func tileOf(lon, lat float64, z int) (int, int) {
	n := math.Exp2(float64(z))
	r := lat * math.Pi / 180
	return int((lon + 180) / 360 * n), int((1 - math.Log(math.Tan(r)+1/math.Cos(r))/math.Pi) / 2 * n)
}

// tileEnv is a parcels projection with loads.
type tileEnv struct {
	t      *testing.T
	pool   *pgxpool.Pool
	runner *projections.Runner
	h      *commands.LoadLayerHandler
}

func newTileEnv(t *testing.T) *tileEnv {
	pool, _ := migratetest.NewPool(t)
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, parcels.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := commands.NewLoadLayerHandler(store, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &tileEnv{t: t, pool: pool, runner: runner, h: h}
}

// load loads rows ("apn,address,lat,lon,date,amount" lines) as layer and
// waits for the projection; it returns the load's position.
func (e *tileEnv) load(layer, sourceDate string, rows []string) int64 {
	e.t.Helper()
	return e.loadIn("99999", layer, sourceDate, rows)
}

// appendLoad appends a load of rows as layer of county to the log and
// returns its last position, without waiting for the projection (so the
// next Step may apply it in one batch with other loads).
func (e *tileEnv) appendLoad(county, layer, sourceDate string, rows []string) uint64 {
	e.t.Helper()
	csv := filepath.Join(e.t.TempDir(), "layer.csv")
	if err := os.WriteFile(csv, []byte("apn,address,lat,lon,date,amount\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	src, err := layerfile.Open(csv, layerfile.Options{County: county})
	if err != nil {
		e.t.Fatal(err)
	}
	defer src.Close()
	lr, err := e.h.Handle(context.Background(), commands.LoadLayer{Layer: records.Layer(layer), Counties: []string{county},
		SourceURL: "https://example.org/synthetic", SourceDate: sourceDate, File: "layer.csv"}, src)
	if err != nil {
		e.t.Fatal(err)
	}
	return uint64(lr.Position)
}

// loadIn loads rows as layer of county (appendLoad) and waits for the
// projection; it returns the load's position.
func (e *tileEnv) loadIn(county, layer, sourceDate string, rows []string) int64 {
	e.t.Helper()
	pos := e.appendLoad(county, layer, sourceDate, rows)
	wctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.runner.WaitFor(wctx, parcels.Name, pos); err != nil {
		e.t.Fatal(err)
	}
	return int64(pos)
}

// TestTileBoundsAndScores: a z10 tile of 5,000 parcels holds at most its
// cap of features, all clusters counting every parcel; a z22 tile holds
// parcels, each scored as records.Motivation scores it from the dates the
// load wrote beside its layers (layer_dates, with no join); TileVersion
// is the version the tile was made at, and moves on with the next load.
// The z10 tile is clusters because it is past its cap (OverCap), so its
// bytes are the same under other weights and another date.
func TestTileBoundsAndScores(t *testing.T) {
	e := newTileEnv(t)
	ctx := context.Background()
	var rows []string
	for i := range 5000 {
		rows = append(rows, fmt.Sprintf("SYN-%05d,%d SYNTHETIC ST,%.6f,%.6f,2026-0%d-15,1.00", i, i+1, 40.0+float64(i/100)*0.001, -100.15+float64(i%100)*0.001, 1+i%9))
	}
	e.load("vacant", "2026-06-01", rows)
	pos := e.load("tax_sale", "2026-05-01", []string{"SYN-00000,1 SYNTHETIC ST,40.000000,-100.150000,2025-01-10,5.00"})
	var layers []string
	var dates []time.Time
	if err := e.pool.QueryRow(ctx, `SELECT layers, layer_dates FROM rm_parcels.parcels WHERE apn = 'SYN-00000'`).Scan(&layers, &dates); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(layers) != "[tax_sale vacant]" || len(dates) != 2 || dates[0].Format(time.DateOnly) != "2025-01-10" || dates[1].Format(time.DateOnly) != "2026-01-15" {
		t.Fatalf("SYN-00000: layers %v, layer_dates %v; want [tax_sale vacant] beside [2025-01-10 2026-01-15]", layers, dates)
	}
	q := parcels.NewQueries(e.pool)
	w, err := records.Weights("")
	if err != nil {
		t.Fatal(err)
	}
	asOf := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	x, y := tileOf(-100.1, 40.02, 10)
	r, err := q.Tile(ctx, 10, x, y, nil, w, asOf)
	if err != nil {
		t.Fatal(err)
	}
	tile, tpos := r.Tile, r.Version.Position
	if !r.Clusters || !r.OverCap {
		t.Fatalf("z10 tile of 5000 parcels: clusters %v, over its cap %v", r.Clusters, r.OverCap)
	}
	w2 := w
	w2.Weights = maps.Clone(w.Weights)
	for l := range w2.Weights {
		w2.Weights[l]++
	}
	if other, err := q.Tile(ctx, 10, x, y, nil, w2, asOf.AddDate(1, 0, 0)); err != nil || !bytes.Equal(other.Tile, tile) {
		t.Fatalf("the z10 cluster tile under other weights and another date differs (%v)", err)
	}
	feats := decodeMVT(t, tile, parcels.TileLayer)
	counted := 0
	for _, f := range feats {
		n, _ := f["count"].(float64)
		if f["cluster"] != true || n < 1 || f["apn"] != nil {
			t.Fatalf("a z10 feature that is not a cluster: %v", f)
		}
		counted += int(n)
	}
	if len(feats) == 0 || len(feats) > parcels.TileCaps()[0].MaxFeatures || counted != 5000 || tpos != pos || len(tile) > parcels.MaxTileBytes {
		t.Fatalf("z10: %d features (cap %d) counting %d parcels of 5000, %d bytes, position %d (want %d)",
			len(feats), parcels.TileCaps()[0].MaxFeatures, counted, len(tile), tpos, pos)
	}
	x, y = tileOf(-100.15, 40.0, 22)
	r, err = q.Tile(ctx, 22, x, y, nil, w, asOf)
	if err != nil || r.Clusters || r.OverCap {
		t.Fatalf("z22 tile: clusters %v, over its cap %v, %v", r.Clusters, r.OverCap, err)
	}
	tile = r.Tile
	feats = decodeMVT(t, tile, parcels.TileLayer)
	want := records.Motivation([]records.ScoreInput{{Layer: "tax_sale", Date: dates[0]}, {Layer: "vacant", Date: dates[1]}}, asOf, w)
	if len(feats) != 1 || feats[0]["apn"] != "SYN-00000" || feats[0]["layers"] != "tax_sale,vacant" || feats[0]["score"] != want.Total {
		t.Fatalf("z22 tile of SYN-00000: %v; want its score %v", feats, want.Total)
	}
	if got, err := q.TileVersion(ctx); err != nil || got != r.Version || got.Position != pos || got.Schema == 0 {
		t.Fatalf("TileVersion = %+v, %v; want the tile's %+v at position %d", got, err, r.Version, pos)
	}
	next := e.load("vacant", "2026-06-02", rows[:10])
	if got, err := q.TileVersion(ctx); err != nil || got.Position != next || next <= pos || got.Schema != r.Version.Schema {
		t.Fatalf("after another load, TileVersion = %+v, %v; want position %d", got, err, next)
	}
}
