package parcelfile_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/parcelfile"
	"github.com/arr-dev/arr/domain/records"
)

// sample is an export of three parcels: one named by two layers, one
// without coordinates, one with an address that needs quoting.
func sample() (records.ExportHeader, []records.ExportParcel) {
	at := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	feb, oct := time.Date(2019, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2019, 10, 1, 0, 0, 0, 0, time.UTC)
	w, _ := records.Weights("2026-02")
	h := records.ExportHeader{County: "24510", Layers: []string{"tax_sale", "vacant"}, Parcels: 3, At: at, Weights: w, ScoreAsOf: at.Truncate(24 * time.Hour)}
	ps := []records.ExportParcel{
		{County: "24510", APN: "0001 001", Address: "1 N MAIN ST", Placed: true, Lon: -76.61234, Lat: 39.29876,
			SourceURL: "https://data.baltimorecity.gov/", Signals: []records.ExportSignal{
				{Layer: "tax_sale", SourceDate: "2019-05-13", RecordDate: "2019-05-13", FirstSeen: oct, LastSeen: oct, LastCrawl: oct, SourceURL: "https://www.bidbaltimore.com/"},
				{Layer: "vacant", SourceDate: "2019-10-01", FirstSeen: feb, LastSeen: oct, LastCrawl: oct, SourceURL: "https://data.baltimorecity.gov/"},
			}},
		{County: "24510", APN: "0002 002", Address: "", SourceURL: "https://www.bidbaltimore.com/", Signals: []records.ExportSignal{
			{Layer: "tax_sale", SourceDate: "2019-05-13", FirstSeen: oct, LastSeen: oct, LastCrawl: oct, SourceURL: "https://www.bidbaltimore.com/"},
		}},
		{County: "24510", APN: "0003 003", Address: `3 "THE" CT, REAR`, Placed: true, Lon: -76.5, Lat: 39.3, SourceURL: "https://data.baltimorecity.gov/"},
	}
	return h, ps
}

type format struct {
	name, ext string
	write     func(t *testing.T, path string, h records.ExportHeader, ps []records.ExportParcel)
}

func writeAll(t *testing.T, w parcelfile.Writer, ps []records.ExportParcel) {
	t.Helper()
	for i := range ps {
		if err := w.Write(&ps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func streamed(newW func(f *os.File, h records.ExportHeader) (parcelfile.Writer, error)) func(t *testing.T, path string, h records.ExportHeader, ps []records.ExportParcel) {
	return func(t *testing.T, path string, h records.ExportHeader, ps []records.ExportParcel) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := newW(f, h)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, w, ps)
	}
}

var formats = []format{
	{"CSV", "csv", streamed(func(f *os.File, h records.ExportHeader) (parcelfile.Writer, error) { return parcelfile.NewCSV(f, h) })},
	{"FlatGeobuf", "fgb", streamed(func(f *os.File, h records.ExportHeader) (parcelfile.Writer, error) {
		return parcelfile.NewFlatGeobuf(f, h)
	})},
	{"GPKG", "gpkg", func(t *testing.T, path string, h records.ExportHeader, ps []records.ExportParcel) {
		w, err := parcelfile.NewGeoPackage(context.Background(), path, h, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, w, ps)
	}},
}

// ogrinfo runs GDAL's ogrinfo, which scripts/test.sh installs
// (ensure_gdal).
func ogrinfo(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ogrinfo"); err != nil {
		t.Fatal("ogrinfo (GDAL) is not installed: run scripts/test.sh, or apt-get install gdal-bin")
	}
	cmd := exec.Command("ogrinfo", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ogrinfo %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	if strings.Contains(errb.String(), "ERROR") {
		t.Fatalf("ogrinfo %s: %s", strings.Join(args, " "), errb.String())
	}
	return out.String()
}

// TestWritersReadBackByGDAL: each writer's file, read back by ogrinfo, has
// the driver, the feature count, the fields, the geometries and the
// source URLs that were written.
func TestWritersReadBackByGDAL(t *testing.T) {
	h, ps := sample()
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "parcels-24510."+f.ext)
			f.write(t, path, h, ps)
			var open []string
			if f.ext == "csv" {
				open = []string{"-oo", "AUTODETECT_TYPE=YES"}
			}
			summary := ogrinfo(t, append(append([]string{"-ro", "-al", "-so"}, open...), path)...)
			geometry := "Geometry: Point"
			if f.ext == "csv" {
				geometry = "Geometry: Unknown (any)" // read from the WKT column
			}
			for _, want := range []string{"using driver `" + f.name + "'", "Feature Count: 3", geometry, "apn: String", "source_url: String",
				"layers: String", "score: Real", "vacant_source_url: String", "tax_sale_first_seen: DateTime", "vacant_last_crawl: DateTime"} {
				if !strings.Contains(summary, want) {
					t.Errorf("ogrinfo -so lacks %q:\n%s", want, summary)
				}
			}
			if f.ext != "csv" && !regexp.MustCompile(`(?s)GEOGCRS\["WGS 84".*ID\["EPSG",4326\]`).MatchString(summary) {
				t.Errorf("no EPSG:4326 in:\n%s", summary)
			}
			all := ogrinfo(t, append(append([]string{"-ro", "-al"}, open...), path)...)
			for _, want := range []string{"POINT (-76.61234 39.29876)", "apn (String) = 0001 001", "layers (String) = tax_sale,vacant",
				"tax_sale_source_url (String) = https://www.bidbaltimore.com/", "vacant_source_url (String) = https://data.baltimorecity.gov/",
				"vacant_first_seen (DateTime) = 2019/02/01 00:00:00", `address (String) = 3 "THE" CT, REAR`, "POINT (-76.5 39.3)",
				// tax_sale 20 x 0.25 + vacant 15 x 0.25 (both over two years old)
				"score (Real) = 8.75", "score (Real) = 5"} {
				if !strings.Contains(all, want) {
					t.Errorf("ogrinfo -al lacks %q:\n%s", want, all)
				}
			}
			// The parcel without coordinates has no geometry, and still
			// its source URL.
			one := ogrinfo(t, append(append([]string{"-ro", "-al", "-where", "apn = '0002 002'"}, open...), path)...)
			if !strings.Contains(one, "source_url (String) = https://www.bidbaltimore.com/") || strings.Contains(one, "POINT (") {
				t.Errorf("the unplaced parcel:\n%s", one)
			}
		})
	}
}

// TestCSVIsRFC4180: CRLF line ends, a header row, quoted fields; read back
// by encoding/csv to the same cells.
func TestCSVIsRFC4180(t *testing.T) {
	h, ps := sample()
	var b bytes.Buffer
	w, err := parcelfile.NewCSV(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, ps)
	if strings.Count(b.String(), "\r\n") != 4 {
		t.Fatalf("want 4 CRLF-ended lines:\n%q", b.String())
	}
	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(rows[0], ",")
	if !strings.HasPrefix(head, "county,apn,address,lon,lat,WKT,source_url,layers,score,tax_sale,tax_sale_source_date,") {
		t.Fatalf("header %s", head)
	}
	if got := rows[3][2]; got != `3 "THE" CT, REAR` {
		t.Fatalf("address read back as %q", got)
	}
	if rows[1][5] != "POINT (-76.61234 39.29876)" || rows[2][3] != "" || rows[2][5] != "" {
		t.Fatalf("geometry cells %q, %q", rows[1][3:6], rows[2][3:6])
	}
}

// TestGeoPackageSizeLimit: a GeoPackage that would pass its limit fails
// with ErrTooLarge, and the file stays within it.
func TestGeoPackageSizeLimit(t *testing.T) {
	h, ps := sample()
	path := filepath.Join(t.TempDir(), "big.gpkg")
	const limit = 64 << 10
	w, err := parcelfile.NewGeoPackage(context.Background(), path, h, limit)
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for i := 0; i < 10000 && werr == nil; i++ {
		p := ps[0]
		p.APN = strings.Repeat("x", 40) + string(rune('a'+i%26))
		werr = w.Write(&p)
	}
	if werr == nil {
		werr = w.Close()
	} else {
		_ = w.Close()
	}
	if !errors.Is(werr, parcelfile.ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", werr)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > limit {
		t.Fatalf("the file is %d bytes, over its limit of %d", st.Size(), limit)
	}
}

// TestEmptyExportsAreValidFiles: a county without parcels is a file with
// no feature, which GDAL opens.
func TestEmptyExportsAreValidFiles(t *testing.T) {
	h := records.ExportHeader{County: "01001", At: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "parcels-01001."+f.ext)
			f.write(t, path, h, nil)
			if out := ogrinfo(t, "-ro", "-al", "-so", path); !strings.Contains(out, "Feature Count: 0") || !strings.Contains(out, "source_url: String") {
				t.Errorf("empty %s:\n%s", f.name, out)
			}
		})
	}
}

// TestCSVNeutralizesFormulas: a text cell that a spreadsheet would take
// for a formula (starting with = + - @, a tab or a carriage return; the
// addresses and URLs come from public files) is written with a leading
// single quote (OWASP's advice), while numeric cells (a negative
// longitude, the score) and the cells of every other kind are written as
// they are.
func TestCSVNeutralizesFormulas(t *testing.T) {
	h, ps := sample()
	hostile := []string{`=HYPERLINK("http://127.0.0.1/x","click")`, "+1 MAIN ST", "-2 MAIN ST", "@SUM(A1)", "\tTAB ST", "\rCR ST"}
	for _, v := range hostile {
		p := ps[2]
		p.APN, p.Address, p.SourceURL = "X "+v[:2], v, v
		ps = append(ps, p)
	}
	h.Parcels = int64(len(ps))
	var b bytes.Buffer
	w, err := parcelfile.NewCSV(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, ps)
	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	// encoding/csv's writer with CRLF line ends drops a lone carriage
	// return: the quote that neutralizes the cell stays first.
	if !bytes.Contains(b.Bytes(), []byte(`"'CR ST"`)) {
		t.Errorf("no cell 'CR ST in the file")
	}
	for i, v := range hostile {
		r := rows[4+i]
		// encoding/csv drops a carriage return inside a quoted field;
		// the file's own bytes are checked above.
		apn := strings.ReplaceAll("X "+v[:2], "\r", "")
		v = strings.ReplaceAll(v, "\r", "")
		for _, name := range []string{"address", "source_url", "apn"} {
			want := "'" + v
			if name == "apn" {
				want = apn // starts with X: nothing to neutralize
			}
			if got := r[col[name]]; got != want {
				t.Errorf("%s %q written as %q, want %q", name, v, got, want)
			}
		}
		if got := r[col["lon"]]; got != "-76.5" {
			t.Errorf("the longitude written as %q, want -76.5 as it is", got)
		}
	}
	if got := rows[1][col["score"]]; got != "8.75" {
		t.Errorf("score %q, want 8.75", got)
	}
	if got := rows[1][col["WKT"]]; got != "POINT (-76.61234 39.29876)" {
		t.Errorf("WKT %q", got)
	}
}
