package layerfile_test

import (
	"io"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/domain/records"
)

func readAll(t *testing.T, r *layerfile.Reader) ([]records.Row, []records.Reject) {
	t.Helper()
	var rows []records.Row
	var rejects []records.Reject
	for {
		rs, rj, err := r.Next(2)
		rows, rejects = append(rows, rs...), append(rejects, rj...)
		if err == io.EOF {
			return rows, rejects
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestCSVRejectsCarryLineNumbers(t *testing.T) {
	in := "Parcel,Street,Lat,Lon,Filed,Owed\n" +
		"123456789012345,1 MAIN ST,39.3,-76.6,05/12/2026,\"$2,462.22\"\n" + // line 2: fine
		",2 MAIN ST,39.3,-76.6,05/12/2026,1\n" + // line 3: no APN
		"TIMESHARE,3 MAIN ST,NA,NA,05/12/2026,1\n" + // line 4: pattern
		"123456789012346,4 MAIN ST,91,-76.6,05/12/2026,1\n" + // line 5: latitude
		"123456789012347,5 MAIN ST,NA,NA,2026-05-12,1\n" + // line 6: date layout
		"123456789012348,\"6 MAIN\nST\",NA,NA,05/12/2026,abc\n" + // lines 7-8: amount
		"123456789012349,9 MAIN ST,NA,NA,,\n" // line 9: fine, no coordinates
	m := layerfile.Mapping{APN: []string{"Parcel"}, APNPattern: "[0-9]{15}", Address: []string{"Street"}, Lat: "Lat", Lon: "Lon",
		Date: "Filed", DateFormat: "01/02/2006", Amount: "Owed"}
	r, err := layerfile.NewReader(strings.NewReader(in), layerfile.Options{Name: "x.csv", County: "12095", Mapping: &m})
	if err != nil {
		t.Fatal(err)
	}
	rows, rejects := readAll(t, r)
	if len(rows) != 2 || rows[0].Line != 2 || rows[1].Line != 9 || *rows[0].Amount != 2_462_220_000 || rows[0].Date != "2026-05-12" || rows[1].Lat != nil {
		t.Fatalf("rows: %+v", rows)
	}
	want := map[int]string{3: "no APN", 4: "does not match", 5: "out of range", 6: "layout", 7: "not a dollar amount"}
	if len(rejects) != len(want) {
		t.Fatalf("rejects: %+v", rejects)
	}
	for _, rj := range rejects {
		if !strings.Contains(rj.Reason, want[rj.Line]) {
			t.Errorf("line %d: %q, want it to say %q", rj.Line, rj.Reason, want[rj.Line])
		}
	}
	if st := r.Stats(); st.Read != 7 || st.Rejected != 5 {
		t.Fatalf("stats %+v", st)
	}
}

func TestGeoJSONPointsAndPolygons(t *testing.T) {
	in := `{"type":"FeatureCollection","features":[
 {"type":"Feature","geometry":{"type":"Point","coordinates":[-76.6,39.3]},"properties":{"apn":"0001 003","address":"2041 W NORTH AVE"}},
 {"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-76,39],[-76,40],[-75,40],[-75,39]]]},"properties":{"apn":"0001 004"}},
 {"type":"Feature","geometry":null,"properties":{"address":"no apn"}}]}`
	r, err := layerfile.NewReader(strings.NewReader(in), layerfile.Options{Name: "v.geojson", County: "24510"})
	if err != nil {
		t.Fatal(err)
	}
	rows, rejects := readAll(t, r)
	if len(rows) != 2 || *rows[0].Lon != -76.6 || *rows[1].Lat != 39.5 || *rows[1].Lon != -75.5 || rows[0].Address != "2041 W NORTH AVE" {
		t.Fatalf("rows: %+v", rows)
	}
	if len(rejects) != 1 || rejects[0].Line != 3 {
		t.Fatalf("rejects: %+v", rejects)
	}
}

func TestParseDollars(t *testing.T) {
	for in, want := range map[string]int64{"$2,462.22": 2_462_220_000, "0.5": 500_000, "-5": -5_000_000, "1410173.5": 1_410_173_500_000} {
		if got, err := layerfile.ParseDollars(in); err != nil || got != want {
			t.Errorf("ParseDollars(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := layerfile.ParseDollars("1.2.3"); err == nil {
		t.Error("1.2.3 must fail")
	}
}
