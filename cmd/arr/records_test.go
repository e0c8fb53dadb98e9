package main_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/demodata"
)

const testMasterKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// dumpTables renders read-model tables as sorted text, to compare a live
// read model with its rebuild.
func dumpTables(t testing.TB, pool *pgxpool.Pool, tables ...string) string {
	t.Helper()
	var b strings.Builder
	for _, tab := range tables {
		var s *string
		if err := pool.QueryRow(context.Background(), `SELECT string_agg(x::text, E'\n' ORDER BY x::text) FROM `+tab+` x`).Scan(&s); err != nil {
			t.Fatalf("dumping %s: %v", tab, err)
		}
		fmt.Fprintf(&b, "== %s\n", tab)
		if s != nil {
			b.WriteString(*s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func getJSON(t testing.TB, u string, headers map[string]string, wantStatus int, v any) []byte {
	t.Helper()
	status, body := get(t, u, headers)
	if status != wantStatus {
		t.Fatalf("GET %s: %d, want %d: %s", u, status, wantStatus, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v: %s", u, err, body)
		}
	}
	return body
}

// vacancyFacts reads the shipped Baltimore vacant-notice file: parcels
// vacant in February only, in both snapshots, in October only, and the
// October count.
type vacancyFacts struct {
	febOnly, both, octOnly string
	febOnlyLon, febOnlyLat float64
	oct                    int
}

func readVacancies(t testing.TB) vacancyFacts {
	t.Helper()
	f, err := demodata.Open("baltimore-md_vacant_building_notices_2019.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f.(io.Reader))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(gz).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var v vacancyFacts
	for _, r := range recs[1:] { // blk,lt,nbrhd,address,vacant_in_feb,vacant_in_oct,...,lat,lon
		apn := r[0] + " " + r[1]
		switch {
		case r[4] == "1" && r[5] == "0" && v.febOnly == "" && r[10] != "NA":
			v.febOnly = apn
			fmt.Sscan(r[10], &v.febOnlyLat)
			fmt.Sscan(r[11], &v.febOnlyLon)
		case r[4] == "1" && r[5] == "1" && v.both == "":
			v.both = apn
		case r[4] == "0" && r[5] == "1" && v.octOnly == "":
			v.octOnly = apn
		}
		if r[5] == "1" {
			v.oct++
		}
	}
	if v.febOnly == "" || v.both == "" || v.octOnly == "" {
		t.Fatalf("the shipped data has no parcel of each kind: %+v", v)
	}
	return v
}

type layerRec struct {
	Layer     string    `json:"layer"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	LastCrawl time.Time `json:"last_crawl"`
	SourceURL string    `json:"source_url"`
}

type signalReport struct {
	Layers        []layerRec `json:"layers"`
	NoLongerNamed []layerRec `json:"no_longer_named"`
	Motivation    struct {
		WeightsVersion string  `json:"weights_version"`
		Total          float64 `json:"total"`
		Terms          []struct {
			Layer         string  `json:"layer"`
			Weight        int     `json:"weight"`
			RecencyFactor float64 `json:"recency_factor"`
			Contribution  float64 `json:"contribution"`
		} `json:"terms"`
	} `json:"motivation"`
}

func findLayer(ls []layerRec, key string) *layerRec {
	for i := range ls {
		if ls[i].Layer == key {
			return &ls[i]
		}
	}
	return nil
}

var (
	phoneRE = regexp.MustCompile(`\(?\b\d{3}\)?[-. ]\d{3}[-. ]\d{4}\b`)
	emailRE = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
)

// TestRecordsService runs the records service over the shipped public data
// (loaded by `arr up` on first start) and walks the must-shows.
func TestRecordsService(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs PostgreSQL with PostGIS")
	}
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	e.createAccount("alice@example.com", "free")
	e.createAccount("bob@example.com", "free")
	alice, bob := e.mint("alice@example.com", "records"), e.mint("bob@example.com", "records")
	ah, bh := map[string]string{"Authorization": "Bearer " + alice.Secret}, map[string]string{"X-API-Key": bob.Secret}
	api := e.records + "/api/v1"
	facts := readVacancies(t)

	t.Run("freshness of two loads of the shipped data", func(t *testing.T) {
		feb, oct := time.Date(2019, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2019, 10, 1, 0, 0, 0, 0, time.UTC)
		var r signalReport
		getJSON(t, api+"/signals/"+url.PathEscape(facts.febOnly)+"?county=24510", ah, 200, &r)
		if l := findLayer(r.NoLongerNamed, "vacant"); l == nil || !l.FirstSeen.Equal(feb) || !l.LastSeen.Equal(feb) || !l.LastCrawl.Equal(oct) || findLayer(r.Layers, "vacant") != nil {
			t.Fatalf("%s (vacant in February only): want no longer named, last seen February, last crawl October; got %+v", facts.febOnly, r)
		}
		getJSON(t, api+"/signals/"+url.PathEscape(facts.both), ah, 200, &r)
		if l := findLayer(r.Layers, "vacant"); l == nil || !l.FirstSeen.Equal(feb) || !l.LastSeen.Equal(oct) || l.SourceURL != "https://data.baltimorecity.gov/" {
			t.Fatalf("%s (vacant in both): want first seen February, last seen October; got %+v", facts.both, r)
		}
		getJSON(t, api+"/signals/"+url.PathEscape(facts.octOnly), ah, 200, &r)
		if l := findLayer(r.Layers, "vacant"); l == nil || !l.FirstSeen.Equal(oct) || !l.LastSeen.Equal(oct) {
			t.Fatalf("%s (vacant in October only): want first seen October; got %+v", facts.octOnly, r)
		}
		var named int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM rm_parcels.parcel_layers WHERE layer = 'vacant' AND named`).Scan(&named); err != nil {
			t.Fatal(err)
		}
		if named != facts.oct {
			t.Fatalf("vacant names %d parcels, the October snapshot has %d", named, facts.oct)
		}
		// The dropped parcel is still a parcel in its box, but not a vacant one.
		box := fmt.Sprintf("%f,%f,%f,%f", facts.febOnlyLon-0.0005, facts.febOnlyLat-0.0005, facts.febOnlyLon+0.0005, facts.febOnlyLat+0.0005)
		var all, vac struct {
			Features []struct {
				Properties struct {
					APN    string   `json:"apn"`
					Layers []string `json:"layers"`
				} `json:"properties"`
			} `json:"features"`
		}
		getJSON(t, api+"/parcels?bbox="+box, nil, 200, &all)
		getJSON(t, api+"/parcels?bbox="+box+"&layers=vacant", nil, 200, &vac)
		has := func(fc any, apn string) bool {
			b, _ := json.Marshal(fc)
			return strings.Contains(string(b), `"apn":"`+apn+`"`)
		}
		if !has(all, facts.febOnly) || has(vac, facts.febOnly) {
			t.Fatalf("bbox around %s: present without a layer filter %v, with layers=vacant %v", facts.febOnly, has(all, facts.febOnly), has(vac, facts.febOnly))
		}
	})

	t.Run("bad bbox and layers get 400 with a message", func(t *testing.T) {
		for _, c := range []struct{ name, query, code string }{
			{"missing", "", "bbox_required"},
			{"three numbers", "bbox=-76.7,39.2,-76.5", "bbox_arity"},
			{"NaN", "bbox=NaN,39.2,-76.5,39.3", "bbox_not_a_number"},
			{"2.5 degrees wide", "bbox=-78,39,-75.5,39.5", "bbox_too_large"},
			{"west > east", "bbox=-76.5,39.2,-76.7,39.3", "bbox_order"},
			{"out of range", "bbox=-200,39.2,-199,39.3", "bbox_out_of_range"},
			{"unknown layer", "bbox=-76.7,39.2,-76.5,39.3&layers=vacant,haunted", "unknown_layer"},
		} {
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			getJSON(t, api+"/parcels?"+c.query, nil, 400, &body)
			if body.Error.Code != c.code || body.Error.Message == "" {
				t.Errorf("%s: got %+v, want code %s with a message", c.name, body.Error, c.code)
			}
			if c.code == "unknown_layer" && !strings.Contains(body.Error.Message, "code_violation, foreclosure_auction, lis_pendens, tax_delinquent, tax_sale, vacant") {
				t.Errorf("unknown layer: the message does not list the valid keys: %s", body.Error.Message)
			}
		}
	})

	// Lists with contact data, for the privacy walk and the erasure.
	dir := t.TempDir()
	aliceCSV := filepath.Join(dir, "alice.csv")
	os.WriteFile(aliceCSV, []byte("APN,Address,Phone,Email\n"+facts.both+",,(410) 555-0142,owner.one@example.com\n,2035 West North Avenue,410-555-0199,second.owner@example.org\n999999,,+1 410 555 0100,\n"), 0o600)
	bobCSV := filepath.Join(dir, "bob.csv")
	os.WriteFile(bobCSV, []byte("folio,phone,email\n494129A10190,954-555-0123,bob.lead@example.net\n"), 0o600)
	var aliceList, bobList struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&aliceList, "import", "list", "--email", "alice@example.com", "--json", aliceCSV)
	e.mustArr(&bobList, "import", "list", "--email", "bob@example.com", "--json", bobCSV)
	type rowsPage struct {
		Data []struct {
			LeadID  string `json:"lead_id"`
			Parcel  *struct{ County, APN string }
			Contact *struct {
				Phone *string `json:"phone"`
				Email *string `json:"email"`
			} `json:"contact"`
			ContactStatus string          `json:"contact_status"`
			Motivation    json.RawMessage `json:"motivation"`
		} `json:"data"`
		Total int `json:"total"`
	}
	var ar rowsPage
	getJSON(t, api+"/lists/"+aliceList.ListID+"/rows?signals=1&include_contact=1", ah, 200, &ar)

	t.Run("include_contact returns the uploaded phone and e-mail", func(t *testing.T) {
		if ar.Total != 3 || len(ar.Data) != 3 {
			t.Fatalf("rows: %+v", ar)
		}
		r0, r1 := ar.Data[0], ar.Data[1]
		if r0.ContactStatus != "ok" || *r0.Contact.Phone != "(410) 555-0142" || *r0.Contact.Email != "owner.one@example.com" {
			t.Fatalf("row 1 contact: %+v", r0)
		}
		if r0.Parcel == nil || r0.Parcel.APN != facts.both || string(r0.Motivation) == "null" {
			t.Fatalf("row 1 should match %s by APN, with a score: %+v", facts.both, r0)
		}
		if r1.Parcel == nil || r1.Parcel.APN != "0001 006" {
			t.Fatalf("row 2 should match 2035 W NORTH AVE (0001 006) by address: %+v", r1)
		}
		var plain rowsPage
		getJSON(t, api+"/lists/"+aliceList.ListID+"/rows", ah, 200, &plain)
		if b, _ := json.Marshal(plain); strings.Contains(string(b), "555-0142") {
			t.Fatalf("contact data without include_contact=1: %s", b)
		}
	})

	t.Run("no public endpoint carries a phone number or e-mail address; other accounts' lists are 404", func(t *testing.T) {
		urls := []string{e.records + "/api/v1", api + "/data-sources", e.records + "/data-sources", api + "/layers", api + "/weights",
			api + "/states?limit=1000", api + "/counties?state=MD", api + "/counties?state=FL", api + "/lenders?limit=1000",
			api + "/tax-sales?limit=1000", e.records + "/openapi.json", e.records + "/healthz",
			api + "/parcels?bbox=-76.72,39.19,-76.52,39.38&limit=1000"}
		for _, county := range []string{"24510", "12095", "12011"} {
			for off := 0; off < 3000; off += 1000 {
				urls = append(urls, fmt.Sprintf("%s/records?county=%s&limit=1000&offset=%d", api, county, off))
			}
		}
		// follow the parcel search's cursor through Baltimore
		next := api + "/parcels?bbox=-76.72,39.19,-76.52,39.38&limit=1000"
		for i := 0; i < 20 && next != ""; i++ {
			var fc struct {
				NextCursor *string `json:"next_cursor"`
			}
			getJSON(t, next, nil, 200, &fc)
			urls = append(urls, next)
			next = ""
			if fc.NextCursor != nil {
				next = api + "/parcels?bbox=-76.72,39.19,-76.52,39.38&limit=1000&cursor=" + *fc.NextCursor
			}
		}
		for _, u := range urls {
			status, body := get(t, u, nil)
			if status != 200 {
				t.Errorf("GET %s: %d %s", u, status, body)
				continue
			}
			for _, secret := range []string{"555-0142", "owner.one@example.com", "555-0199", "bob.lead@example.net"} {
				if bytes.Contains(body, []byte(secret)) {
					t.Errorf("GET %s carries uploaded contact data %q", u, secret)
				}
			}
			if m := phoneRE.Find(body); m != nil {
				t.Errorf("GET %s carries a phone number: %q", u, m)
			}
			if m := emailRE.Find(body); m != nil {
				t.Errorf("GET %s carries an e-mail address: %q", u, m)
			}
		}
		getJSON(t, api+"/lists/"+aliceList.ListID+"/rows", bh, 404, nil)
		getJSON(t, api+"/lists/"+aliceList.ListID+"/rows?include_contact=1", bh, 404, nil)
		getJSON(t, api+"/signals/"+ar.Data[0].LeadID, bh, 404, nil)
		var bl struct {
			Data []struct{ ID string } `json:"data"`
		}
		getJSON(t, api+"/lists", bh, 200, &bl)
		if len(bl.Data) != 1 || bl.Data[0].ID != bobList.ListID {
			t.Fatalf("bob's lists: %+v", bl)
		}
	})

	t.Run("motivation terms add up; the weights version changes the score and says so", func(t *testing.T) {
		var cur, old signalReport
		lead := ar.Data[0].LeadID
		getJSON(t, api+"/signals/"+lead+"?as_of=2019-11-01", ah, 200, &cur)
		getJSON(t, api+"/signals/"+lead+"?as_of=2019-11-01&weights=2025-09", ah, 200, &old)
		for _, s := range []signalReport{cur, old} {
			sum := 0.0
			for _, term := range s.Motivation.Terms {
				if math.Abs(float64(term.Weight)*term.RecencyFactor-term.Contribution) > 1e-9 {
					t.Errorf("term %+v: weight x factor != contribution", term)
				}
				sum += term.Contribution
			}
			if len(s.Motivation.Terms) == 0 || math.Abs(sum-s.Motivation.Total) > 1e-9 {
				t.Fatalf("terms %+v add up to %v, total %v", s.Motivation.Terms, sum, s.Motivation.Total)
			}
		}
		if cur.Motivation.WeightsVersion != "2026-02" || old.Motivation.WeightsVersion != "2025-09" || cur.Motivation.Total == old.Motivation.Total {
			t.Fatalf("versions %s/%s, totals %v/%v", cur.Motivation.WeightsVersion, old.Motivation.WeightsVersion, cur.Motivation.Total, old.Motivation.Total)
		}
		getJSON(t, api+"/signals/"+lead+"?weights=1999-01", ah, 400, nil)
	})

	t.Run("a load that fails midway leaves the read models as they were", func(t *testing.T) {
		before := dumpTables(t, pool, "rm_parcels.parcels", "rm_parcels.parcel_layers")
		var raw bytes.Buffer
		gz := gzip.NewWriter(&raw)
		fmt.Fprintln(gz, "apn,address,date")
		for i := 0; i < 60000; i++ {
			fmt.Fprintf(gz, "%015d,%d TEST ST,2026-01-%02d\n", 100000000000000+i, i, 1+i%28)
		}
		gz.Close()
		broken := filepath.Join(dir, "broken.csv.gz")
		os.WriteFile(broken, raw.Bytes()[:raw.Len()*2/3], 0o600)
		_, stderr, code := e.arr("load", "layer", "--layer", "code_violation", "--county", "12095", "--source-url", "https://example.org/broken",
			"--source-date", "2026-06-01", "--chunk-rows", "2000", broken)
		if code == 0 || !strings.Contains(stderr, "nothing of it is applied") {
			t.Fatalf("a truncated file must fail the load: exit %d, %s", code, stderr)
		}
		waitCaughtUp(t, pool, 90*time.Second)
		var status string
		var chunks int
		if err := pool.QueryRow(context.Background(), `SELECT l.status, (SELECT count(*) FROM events WHERE stream_id = 'layerload-' || l.load_id AND event_type = 'LayerRowsLoaded')
			FROM rm_parcels.loads l WHERE source_url = 'https://example.org/broken'`).Scan(&status, &chunks); err != nil {
			t.Fatal(err)
		}
		if status != "failed" || chunks == 0 {
			t.Fatalf("load status %q with %d chunks in the log; want failed after some chunks", status, chunks)
		}
		if after := dumpTables(t, pool, "rm_parcels.parcels", "rm_parcels.parcel_layers"); after != before {
			t.Fatal("the failed load changed the parcels read model")
		}
	})

	t.Run("after erasure contact data is unreadable everywhere, including a fresh rebuild", func(t *testing.T) {
		e.mustArr(nil, "accounts", "erase-contact-data", "--email", "alice@example.com", "--json")
		check := func(when string) {
			var r rowsPage
			getJSON(t, api+"/lists/"+aliceList.ListID+"/rows?include_contact=1", ah, 200, &r)
			for _, row := range r.Data {
				if row.Contact != nil || (row.ContactStatus != "erased" && row.ContactStatus != "none") {
					t.Fatalf("%s: row %+v still has contact data", when, row)
				}
			}
			var b rowsPage
			getJSON(t, api+"/lists/"+bobList.ListID+"/rows?include_contact=1", bh, 200, &b)
			if b.Data[0].ContactStatus != "ok" || *b.Data[0].Contact.Email != "bob.lead@example.net" {
				t.Fatalf("%s: bob's contact data must stay readable: %+v", when, b.Data[0])
			}
		}
		check("after erasure")
		var keys, sealed int
		if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM records_data_keys k JOIN rm_identity.accounts a USING (account_id) WHERE a.email = 'alice@example.com'),
			(SELECT count(*) FROM rm_lists.list_rows r JOIN rm_identity.accounts a USING (account_id) WHERE a.email = 'alice@example.com' AND r.contact IS NOT NULL)`).Scan(&keys, &sealed); err != nil {
			t.Fatal(err)
		}
		if keys != 0 || sealed != 0 {
			t.Fatalf("after erasure: %d data keys, %d sealed contact columns left in the read model", keys, sealed)
		}
		e.mustArr(nil, "projections", "rebuild", "lists")
		check("after a rebuild")
		out, _, code := e.arr("events", "export", "--from", "0", "--format", "ndjson")
		if code != 0 || !strings.Contains(out, "ListRowsImported") {
			t.Fatalf("export: exit %d", code)
		}
		for _, secret := range []string{"555-0142", "owner.one@example.com", "555-0199", "second.owner@example.org", "bob.lead@example.net"} {
			if strings.Contains(out, secret) {
				t.Fatalf("the event export carries %q in clear", secret)
			}
		}
	})

	t.Run("parcels and lists read models equal themselves after a rebuild", func(t *testing.T) {
		waitCaughtUp(t, pool, 90*time.Second)
		tables := []string{"rm_parcels.loads", "rm_parcels.parcels", "rm_parcels.parcel_layers", "rm_parcels.staged", "rm_lists.lists", "rm_lists.list_rows", "rm_lists.erasures"}
		live := dumpTables(t, pool, tables...)
		e.mustArr(nil, "projections", "rebuild", "parcels")
		e.mustArr(nil, "projections", "rebuild", "lists")
		if rebuilt := dumpTables(t, pool, tables...); rebuilt != live {
			t.Fatalf("rebuilt read models differ from the live ones (%d vs %d bytes)", len(rebuilt), len(live))
		}
	})
}
