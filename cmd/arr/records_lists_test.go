package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/demodata/listeval"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/records"
)

// listRowsPage is GET /api/v1/lists/{id}/rows.
type listRowsPage struct {
	Data []struct {
		Row    int `json:"row"`
		Parcel *struct {
			County string `json:"county"`
			APN    string `json:"apn"`
		} `json:"parcel"`
		MatchedBy *string         `json:"matched_by"`
		Reason    *string         `json:"reason"`
		Signals   json.RawMessage `json:"signals"`
	} `json:"data"`
	Total int `json:"total"`
}

// shapeScore is one export shape's match outcome against the truth.
type shapeScore struct {
	shape                                   string
	rows, loaded                            int
	right, wrong, ambiguous, unmatched      int
	rightLoaded, ambiguousLoaded, unmLoaded int
	reasons                                 map[string]int
}

// TestRecordsListShapes imports lists built from the real county files in
// five export shapes (adapters/demodata/listeval) into an arr up that
// loaded the demo data, through `arr import list` and through the account
// page, and scores every row against its true parcel: right, wrong,
// ambiguous, unmatched. Of the rows whose parcel is loaded, at least 98%
// match the right parcel and none a wrong one. signals=1 answers the
// matched rows' signals, and a monitor on a list delivers for a matched
// row when a load names its parcel.
func TestRecordsListShapes(t *testing.T) {
	var hits atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "ARR_WEBHOOK_PRIVATE=allow")
	e.up()
	pool, st := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 5*time.Minute)
	e.createAccount("lists@example.com", "free")
	key := e.mint("lists@example.com", "records")
	keyed := map[string]string{"X-API-Key": key.Secret}

	loaded := map[string]bool{}
	rows, err := pool.Query(context.Background(), `SELECT county || ' ' || apn_norm FROM rm_parcels.parcels`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		loaded[k] = true
	}
	rows.Close()
	recs, err := listeval.Records(25)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var scores []shapeScore
	var firstList string
	var firstMatched *listeval.Truth
	for _, shape := range listeval.Shapes {
		l, err := listeval.Build(shape, recs)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, shape+".csv")
		if err := os.WriteFile(f, l.CSV, 0o600); err != nil {
			t.Fatal(err)
		}
		var res struct {
			ListID string `json:"list_id"`
			Rows   int    `json:"rows"`
			Match  struct {
				Matched, Ambiguous, Unmatched int
			} `json:"match"`
		}
		e.mustArr(&res, "import", "list", "--email", "lists@example.com", "--json", f)
		sc := score(t, e, keyed, res.ListID, l)
		if res.Match.Matched != sc.right+sc.wrong || res.Match.Ambiguous != sc.ambiguous || res.Match.Unmatched != sc.unmatched {
			t.Errorf("%s: the import answered %+v, the rows say %+v", shape, res.Match, sc)
		}
		scores = append(scores, sc)
		if firstList == "" {
			firstList = res.ListID
			for i, tr := range l.Truths {
				if loaded[tr.County+" "+tr.APNNorm] && i < 50 {
					firstMatched = &l.Truths[i]
					break
				}
			}
		}
	}
	// The account page imports the same files (a form post, as the page
	// sends it) and answers the same counts.
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := session(t, pool, cmds, "lists@example.com")
	for i, shape := range listeval.Shapes {
		l, _ := listeval.Build(shape, recs)
		id, page := postList(t, e.records, token, shape+".csv", l.CSV, "")
		sc := score(t, e, keyed, id, l)
		m := regexp.MustCompile(`id="matched">(\d+)<.*id="ambiguous">(\d+)<.*id="unmatched">(\d+)<`).FindStringSubmatch(page)
		if m == nil || m[1] != fmt.Sprint(sc.right+sc.wrong) || m[2] != fmt.Sprint(sc.ambiguous) || m[3] != fmt.Sprint(sc.unmatched) {
			t.Errorf("%s from the page: the page says %v, the rows %+v", shape, m, sc)
		}
		if fmt.Sprint(sc) != fmt.Sprint(scores[i]) {
			t.Errorf("%s: the page's import scored %+v, the CLI's %+v", shape, sc, scores[i])
		}
	}
	report(t, scores)

	// An explicit mapping reads the same file as the header table does,
	// from the CLI and the page; a hostile one is a 400 that says what to
	// fix, and imports nothing.
	reisift, _ := listeval.Build("reisift", recs)
	mapping := `{"address": "Property address", "city": "Property city", "state": "Property state", "zip": "Property zip", "mailing": ["Mailing address", "Mailing city", "Mailing state", "Mailing zip"]}`
	mf := filepath.Join(dir, "mapping.json")
	if err := os.WriteFile(mf, []byte(mapping), 0o600); err != nil {
		t.Fatal(err)
	}
	var mapped struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&mapped, "import", "list", "--email", "lists@example.com", "--json", "--mapping", mf, filepath.Join(dir, "reisift.csv"))
	if sc := score(t, e, keyed, mapped.ListID, reisift); fmt.Sprint(sc) != fmt.Sprint(scores[3]) {
		t.Errorf("reisift by --mapping scored %+v, by the header table %+v", sc, scores[3])
	}
	if id, _ := postList(t, e.records, token, "reisift-mapped.csv", reisift.CSV, mapping); fmt.Sprint(score(t, e, keyed, id, reisift)) != fmt.Sprint(scores[3]) {
		t.Errorf("reisift by the page's mapping scored otherwise")
	}
	for _, bad := range []struct{ mapping, want string }{
		{`{"address": "Mailing address", "mailing": ["Mailing address"]}`, "both"},
		{`{"adress": "Property address"}`, "unknown field"},
		{`{"address": "Property addr"}`, "not in the file"},
		{`{"address": "Property address"} {"apn": "x"}`, "more than one"},
	} {
		status, page := postListStatus(t, e.records, token, "bad.csv", reisift.CSV, bad.mapping)
		if status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(page), bad.want) {
			t.Errorf("mapping %s: %d, want 400 saying %q", bad.mapping, status, bad.want)
		}
	}
	// A bare City before any address, in a file that also has the
	// owner's mailing address, is the property's or the mailing's: the
	// header cannot tell, so both paths refuse it and say how to map it.
	amb := filepath.Join(dir, "ambiguous.csv")
	ambCSV := "City,Property Address,Mailing Address,Phone\nBaltimore,2041 W NORTH AVE,PO BOX 1,4105550100\n"
	if err := os.WriteFile(amb, []byte(ambCSV), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := e.arr("import", "list", "--email", "lists@example.com", amb); code == 0 || !strings.Contains(errs, "ambiguous_column") || !strings.Contains(errs, "--mapping") {
		t.Errorf("a bare City before the addresses: exit %d %s %s, want ambiguous_column naming --mapping", code, out, errs)
	}
	if status, page := postListStatus(t, e.records, token, "ambiguous.csv", []byte(ambCSV), ""); status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(page), "Column mapping") {
		t.Errorf("the page on a bare City before the addresses: %d, want 400 naming the Column mapping field", status)
	}
	for body, want := range map[string]string{"apn,address\n": "not a JSON object", `{"apn": "` + strings.Repeat("x", 17000) + `"}`: "over 16384 bytes"} {
		bad := filepath.Join(dir, "bad-mapping.json")
		if err := os.WriteFile(bad, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, errs, code := e.arr("import", "list", "--email", "lists@example.com", "--mapping", bad, filepath.Join(dir, "reisift.csv")); code == 0 || !strings.Contains(errs, want) {
			t.Errorf("--mapping %.20q: exit %d %s, want %q", body, code, errs, want)
		}
	}
	for _, sc := range scores {
		if sc.wrong != 0 {
			t.Errorf("%s: %d rows matched a wrong parcel", sc.shape, sc.wrong)
		}
		if sc.loaded == 0 || float64(sc.rightLoaded) < 0.98*float64(sc.loaded) {
			t.Errorf("%s: %d of %d rows whose parcel is loaded matched it, want >= 98%%", sc.shape, sc.rightLoaded, sc.loaded)
		}
	}

	// signals=1 carries the matched rows' signals.
	var page listRowsPage
	getJSON(t, e.records+"/api/v1/lists/"+firstList+"/rows?signals=1&limit=50", keyed, 200, &page)
	withSignals := 0
	for _, r := range page.Data {
		if r.Parcel != nil && len(r.Signals) > 2 {
			withSignals++
		}
		if r.Parcel == nil && string(r.Signals) != "[]" {
			t.Errorf("row %d matched nothing and has signals %s", r.Row, r.Signals)
		}
	}
	if withSignals == 0 {
		t.Fatalf("signals=1: no matched row with signals in %d rows", len(page.Data))
	}

	// A monitor on the first list delivers when a load names a matched
	// row's parcel in a layer it was not in.
	if firstMatched == nil {
		t.Fatal("no matched row to watch")
	}
	var mon struct {
		MonitorID string `json:"monitor_id"`
	}
	e.mustArr(&mon, "monitors", "create", "--email", "lists@example.com", "--list", firstList, "--url", hook.URL+"/hook", "--layers", "lis_pendens", "--json")
	lp := filepath.Join(dir, "lis_pendens.csv")
	if err := os.WriteFile(lp, []byte("apn,address\n"+firstMatched.APN+",\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := e.arr("load", "layer", "--layer", "lis_pendens", "--county", firstMatched.County, "--source-url", "https://example.org/lis-pendens",
		"--source-date", "2026-09-01", lp); code != 0 {
		t.Fatalf("load: exit %d %s %s", code, out, errs)
	}
	var dp deliveriesPage
	deadline := time.Now().Add(60 * time.Second)
	for {
		getJSON(t, e.records+"/api/v1/monitors/"+mon.MonitorID+"/deliveries", keyed, 200, &dp)
		if (dp.Total >= 1 && dp.Data[0].Status == "delivered") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if dp.Total < 1 || dp.Data[0].Status != "delivered" || hits.Load() < 1 || !strings.Contains(string(dp.Data[0].Payload), `"apn":"`+firstMatched.APN+`"`) {
		t.Fatalf("the monitor's deliveries after the load: %+v (hook hit %d times)", dp, hits.Load())
	}
}

// score reads a list's rows and scores each against its truth.
func score(t *testing.T, e *env, keyed map[string]string, id string, l listeval.List) shapeScore {
	t.Helper()
	sc := shapeScore{shape: l.Shape, rows: len(l.Truths), reasons: map[string]int{}}
	pool, _ := openStore(t, e.dbURL)
	for off := 0; off < len(l.Truths); off += 1000 {
		var page listRowsPage
		getJSON(t, fmt.Sprintf("%s/api/v1/lists/%s/rows?limit=1000&offset=%d", e.records, id, off), keyed, 200, &page)
		for _, r := range page.Data {
			tr := l.Truths[r.Row-1]
			var n int
			if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM rm_parcels.parcels WHERE county = $1 AND apn_norm = $2`, tr.County, tr.APNNorm).Scan(&n); err != nil {
				t.Fatal(err)
			}
			isLoaded := n > 0
			if isLoaded {
				sc.loaded++
			}
			switch {
			case r.Parcel != nil && r.Parcel.County == tr.County && records.NormalizeAPN(r.Parcel.APN) == tr.APNNorm:
				sc.right++
				if isLoaded {
					sc.rightLoaded++
				}
			case r.Parcel != nil:
				sc.wrong++
				t.Logf("%s row %d (%s %s, from %s) matched %s %s by %s", l.Shape, r.Row, tr.County, tr.APN, tr.Source, r.Parcel.County, r.Parcel.APN, *r.MatchedBy)
			case r.Reason != nil && *r.Reason == "ambiguous":
				sc.ambiguous++
				if isLoaded {
					sc.ambiguousLoaded++
				}
			default:
				sc.unmatched++
				if r.Reason != nil {
					sc.reasons[*r.Reason]++
				}
				if isLoaded {
					sc.unmLoaded++
				}
			}
		}
	}
	return sc
}

// postListStatus posts a list file to the account page and returns the
// status and page of the answer, without following a redirect.
func postListStatus(t *testing.T, base, token, name string, file []byte, mapping string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf_token", csrfFor(token))
	_ = mw.WriteField("mapping", mapping)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(file)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/account/lists", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Cookie", "arr_session="+token)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postList posts a list file to the account page as its form does and
// returns the new list's id and the page the redirect shows.
func postList(t *testing.T, base, token, name string, file []byte, mapping string) (string, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf_token", csrfFor(token))
	_ = mw.WriteField("name", name)
	_ = mw.WriteField("mapping", mapping)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(file)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/account/lists", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Cookie", "arr_session="+token)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	m := regexp.MustCompile(`list=([0-9a-f-]{36})`).FindStringSubmatch(loc)
	if resp.StatusCode != http.StatusSeeOther || m == nil {
		t.Fatalf("POST /account/lists %s: %d %s %s", name, resp.StatusCode, loc, b)
	}
	status, page := get(t, base+loc, map[string]string{"Cookie": "arr_session=" + token})
	if status != 200 {
		t.Fatalf("GET %s: %d", loc, status)
	}
	return m[1], string(page)
}

// report logs the match table (and writes it to $ARR_LISTEVAL_OUT).
func report(t *testing.T, scores []shapeScore) {
	var b strings.Builder
	b.WriteString("| shape | rows | parcel loaded | right | wrong | ambiguous | unmatched | right of loaded |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range scores {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d %v | %.1f%% |\n", s.shape, s.rows, s.loaded, s.right, s.wrong, s.ambiguous, s.unmatched, s.reasons,
			100*float64(s.rightLoaded)/float64(max(s.loaded, 1)))
	}
	t.Logf("list match table:\n%s", b.String())
	if p := os.Getenv("ARR_LISTEVAL_OUT"); p != "" {
		_ = os.WriteFile(p, []byte(b.String()), 0o644)
	}
}
