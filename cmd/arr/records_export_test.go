package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ogrinfo runs GDAL's ogrinfo (scripts/test.sh installs it: ensure_gdal)
// and returns what it printed; an error it reports fails the test.
func ogrinfo(t testing.TB, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ogrinfo"); err != nil {
		t.Fatal("ogrinfo (GDAL) is not installed: run scripts/test.sh, or apt-get install gdal-bin")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ogrinfo", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || strings.Contains(errb.String(), "ERROR") {
		t.Fatalf("ogrinfo %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// download saves a GET's body to path and returns the response.
func download(t testing.TB, u string, headers map[string]string, path string) (*http.Response, int64, time.Duration) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d: %s", u, resp.StatusCode, b)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(f, resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", u, err)
	}
	return resp, n, time.Since(start)
}

// sqlCount runs an OGR SQL count over a file's layer parcels.
func sqlCount(t testing.TB, path string, open []string, where string) int {
	t.Helper()
	args := append(append([]string{"-ro", "-q"}, open...), path, "-sql", "SELECT COUNT(*) AS n FROM parcels WHERE "+where)
	out := ogrinfo(t, args...)
	m := regexp.MustCompile(`n \(Integer\) = (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no count in:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestRecordsExport exports Baltimore City (24510) of the shipped data in
// each format through a real `arr up`, reads every file back with GDAL's
// ogrinfo, and checks that it holds every parcel of the county with the
// source URL of every record; then the export's hostile parameters and
// its concurrency bounds.
func TestRecordsExport(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	// Loading the demo data takes a minute on an idle machine, a few on
	// a busy one.
	waitCaughtUp(t, pool, 5*time.Minute)
	keys := map[string]map[string]string{}
	for _, who := range []string{"alice", "bob", "carol"} {
		e.createAccount(who+"@example.com", "free")
		keys[who] = map[string]string{"Authorization": "Bearer " + e.mint(who+"@example.com", "records").Secret}
	}
	api := e.records + "/api/v1/exports/parcels"
	ctx := context.Background()
	var parcels, vacant, taxSale, unplaced int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE 'vacant' = ANY(layers)), count(*) FILTER (WHERE 'tax_sale' = ANY(layers)),
		count(*) FILTER (WHERE geom IS NULL) FROM rm_parcels.parcels WHERE county = '24510'`).Scan(&parcels, &vacant, &taxSale, &unplaced); err != nil {
		t.Fatal(err)
	}
	if parcels < 1000 || vacant == 0 || taxSale == 0 {
		t.Fatalf("the demo data has %d parcels in 24510 (%d vacant, %d tax sale)", parcels, vacant, taxSale)
	}
	facts := readVacancies(t)
	dir := t.TempDir()
	// The score the export carries is the signals API's, as of today
	// with the default weights.
	status, body := get(t, e.records+"/api/v1/signals/"+url.PathEscape(facts.both)+"?county=24510", keys["alice"])
	var report struct {
		Motivation struct{ Total float64 } `json:"motivation"`
	}
	if err := json.Unmarshal(body, &report); status != http.StatusOK || err != nil {
		t.Fatalf("signals of %s: %d %s", facts.both, status, body)
	}

	for _, f := range []struct{ format, driver string }{{"csv", "CSV"}, {"fgb", "FlatGeobuf"}, {"gpkg", "GPKG"}} {
		t.Run(f.format, func(t *testing.T) {
			path := filepath.Join(dir, "parcels."+f.format)
			resp, size, took := download(t, api+"?county=24510&format="+f.format, keys["alice"], path)
			t.Logf("export of 24510 as %s: %d parcels, %d bytes in %s", f.format, parcels, size, took.Round(time.Millisecond))
			cd := resp.Header.Get("Content-Disposition")
			if !regexp.MustCompile(`^attachment; filename="parcels-24510-\d{8}\.` + f.format + `"$`).MatchString(cd) {
				t.Errorf("Content-Disposition %q", cd)
			}
			if got := resp.Header.Get("X-Arr-Export-Parcels"); got != strconv.Itoa(parcels) {
				t.Errorf("X-Arr-Export-Parcels %s, the county has %d parcels", got, parcels)
			}
			var open []string
			if f.format == "csv" {
				open = []string{"-oo", "AUTODETECT_TYPE=YES", "-oo", "KEEP_SOURCE_COLUMNS=YES"}
			}
			summary := ogrinfo(t, append(append([]string{"-ro", "-al", "-so"}, open...), path)...)
			for _, want := range []string{"using driver `" + f.driver + "'", fmt.Sprintf("Feature Count: %d\n", parcels),
				"source_url: String", "score: Real", "vacant_source_url: String", "tax_sale_source_url: String", "vacant_first_seen: DateTime"} {
				if !strings.Contains(summary, want) {
					t.Errorf("ogrinfo -so lacks %q:\n%s", want, summary)
				}
			}
			// The source URL of every record: every parcel's, and every
			// layer record's.
			if n := sqlCount(t, path, open, "source_url IS NULL OR source_url = ''"); n != 0 {
				t.Errorf("%d parcels without a source URL", n)
			}
			if n := sqlCount(t, path, open, "vacant_source_url = 'https://data.baltimorecity.gov/'"); n != vacant {
				t.Errorf("%d parcels with the vacant layer's source URL, %d are vacant", n, vacant)
			}
			if n := sqlCount(t, path, open, "tax_sale_source_url LIKE 'https://%'"); n != taxSale {
				t.Errorf("%d parcels with a tax-sale source URL, %d are in the tax sale", n, taxSale)
			}
			one := ogrinfo(t, append(append([]string{"-ro", "-al", "-where", "apn = '" + facts.both + "'"}, open...), path)...)
			for _, want := range []string{"POINT (-76.", "vacant_first_seen (DateTime) = 2019/02/01 00:00:00", "vacant_last_seen (DateTime) = 2019/10/01 00:00:00"} {
				if !strings.Contains(one, want) {
					t.Errorf("parcel %s lacks %q:\n%s", facts.both, want, one)
				}
			}
			m := regexp.MustCompile(`score \((?:Real|Integer)\) = (\S+)`).FindStringSubmatch(one)
			if m == nil {
				t.Errorf("parcel %s has no score:\n%s", facts.both, one)
			} else if got, _ := strconv.ParseFloat(m[1], 64); got != report.Motivation.Total {
				t.Errorf("parcel %s: score %s in the export, %v from /api/v1/signals", facts.both, m[1], report.Motivation.Total)
			}
			if f.format == "csv" {
				b, _ := os.ReadFile(path)
				if m := phoneRE.Find(b); m != nil {
					t.Errorf("a phone number in the export: %q", m)
				}
				if m := emailRE.Find(b); m != nil {
					t.Errorf("an e-mail address in the export: %q", m)
				}
			}
		})
	}

	t.Run("the layers filter exports the parcels it names", func(t *testing.T) {
		path := filepath.Join(dir, "parcels.fgb")
		resp, _, _ := download(t, api+"?county=24510&format=fgb&layers=tax_sale", keys["alice"], path)
		if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="parcels-24510-tax_sale-`) {
			t.Errorf("Content-Disposition %q", cd)
		}
		out := ogrinfo(t, "-ro", "-al", "-so", path)
		if !strings.Contains(out, fmt.Sprintf("Feature Count: %d\n", taxSale)) {
			t.Errorf("want %d tax-sale parcels:\n%s", taxSale, out)
		}
		// The columns are the requested layer's only.
		if !strings.Contains(out, "tax_sale_source_url: String") || strings.Contains(out, "vacant_source_url") {
			t.Errorf("want the tax_sale columns and no vacant ones:\n%s", out)
		}
	})

	t.Run("hostile parameters are 400 naming what to fix", func(t *testing.T) {
		for _, c := range []struct{ name, query, code, field string }{
			{"no format", "county=24510", "invalid_format", "format"},
			{"unknown format", "county=24510&format=shp", "invalid_format", "format"},
			{"format in capitals", "county=24510&format=CSV", "invalid_format", "format"},
			{"no county", "format=csv", "county_required", "county"},
			{"unknown county", "county=99999&format=csv", "unknown_county", "county"},
			{"short county", "county=2451&format=csv", "invalid_county", "county"},
			{"county with SQL", "county=" + url.QueryEscape("24510' OR '1'='1") + "&format=csv", "whitespace_in_value", "county"},
			{"county with quote", "county=" + url.QueryEscape("2451'") + "&format=csv", "invalid_county", "county"},
			{"repeated county", "county=24510&county=24510&format=csv", "invalid_query_parameter", ""},
			{"unknown parameter", "county=24510&format=csv&bbox=1,2,3,4", "invalid_query_parameter", ""},
			{"unknown layer", "county=24510&format=csv&layers=vacant,owners", "unknown_layer", "layers"},
			{"format with a path", "county=24510&format=" + url.QueryEscape("../../etc/passwd"), "invalid_format", "format"},
		} {
			status, body := get(t, api+"?"+c.query, keys["alice"])
			var eb struct {
				Error struct {
					Code, Field, Message string
				} `json:"error"`
			}
			_ = json.Unmarshal(body, &eb)
			if status != http.StatusBadRequest || eb.Error.Code != c.code || (c.field != "" && eb.Error.Field != c.field) || eb.Error.Message == "" {
				t.Errorf("%s: %d %s, want 400 %s on %q", c.name, status, body, c.code, c.field)
			}
		}
		if status, body := get(t, api+"?county=24510&format=csv", nil); status != http.StatusUnauthorized {
			t.Errorf("without a key: %d %s, want 401", status, body)
		}
	})

	t.Run("one export per account, two per process, 429 with Retry-After otherwise", func(t *testing.T) {
		held := []*http.Response{holdExport(t, api+"?county=24510&format=csv", keys["alice"])}
		defer func() {
			for _, r := range held {
				r.Body.Close()
			}
		}()
		busy := func(who, code string) {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, api+"?county=24510&format=csv", nil)
			req.Header.Set("Authorization", keys[who]["Authorization"])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"code":"`+code+`"`) || resp.Header.Get("Retry-After") != "30" {
				t.Fatalf("%s: %d (Retry-After %q) %s, want 429 %s", who, resp.StatusCode, resp.Header.Get("Retry-After"), body, code)
			}
		}
		busy("alice", "export_in_progress")
		held = append(held, holdExport(t, api+"?county=24510&format=fgb", keys["bob"]))
		busy("carol", "exports_busy")
		for _, r := range held {
			r.Body.Close()
		}
		held = nil
		// The cut exports give their places back once their writes fail.
		deadline := time.Now().Add(90 * time.Second)
		for {
			status, body := get(t, api+"?county=24510&format=csv&layers=vacant", keys["carol"])
			if status == http.StatusOK {
				break
			}
			if status != http.StatusTooManyRequests || time.Now().After(deadline) {
				t.Fatalf("after the held exports ended: %d %s", status, body)
			}
			time.Sleep(500 * time.Millisecond)
		}
	})

	t.Run("a client that stops reading is cut off, and sees the file is not whole", func(t *testing.T) {
		resp := holdExport(t, api+"?county=24510&format=fgb", keys["carol"])
		defer resp.Body.Close()
		// Past the 30 s each write may wait for the client (the
		// export's write stall), the server gives up on it.
		time.Sleep(35 * time.Second)
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil {
			t.Fatalf("the cut export read as a whole file of %d bytes", n)
		}
		t.Logf("the cut export ended after %d bytes: %v", n, err)
		if status, body := get(t, api+"?county=24510&format=csv&layers=tax_sale", keys["carol"]); status != http.StatusOK {
			t.Fatalf("the next export of the key: %d %s", status, body)
		}
	})
}

// holdExport starts an export whose client reads its headers and then
// stops reading (its socket's receive buffer is 4 KiB), so the export
// stays running, blocked in its writes, until the body is closed.
func holdExport(t testing.TB, u string, headers map[string]string) *http.Response {
	t.Helper()
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	return resp
}
