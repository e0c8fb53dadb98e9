package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
)

// TestAttackPolygonTurnsHeldBySlowBodies: the polygon route takes its
// turn (one of four per process) before it reads the request body, and a
// body may take ARR_BODY_TIMEOUT (30 s) to arrive, far past the route's
// 10 s statement timeout. Four key-less connections that send the headers
// of a POST /api/v1/parcels/query and then nothing hold every turn: every
// other polygon search of every client waits its 11 s and answers 503
// query_timeout, while the four holders end as 408s, which count against
// no quota (ARR_BODY_TIMEOUT's documented rule), so one IP can keep the
// route shut for free.
func TestAttackPolygonTurnsHeldBySlowBodies(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "ARR_PUBLIC_RATE_LIMIT=100000")
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	host := strings.TrimPrefix(e.records, "http://")
	for range 4 {
		conn, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /api/v1/parcels/query HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{", host)
	}
	time.Sleep(time.Second)
	small := []byte(`{"geometry":{"type":"Polygon","coordinates":[[[-76.66,39.30],[-76.64,39.30],[-76.64,39.32],[-76.66,39.32],[-76.66,39.30]]]},"limit":5}`)
	client := &http.Client{Timeout: 25 * time.Second}
	start := time.Now()
	resp, err := client.Post(e.records+"/api/v1/parcels/query", "application/json", bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		code, msg := problemOf(b)
		t.Fatalf("a small polygon search while four clients dribble bodies: %d %s %q after %s, want 200 (the turns are held by requests whose bodies have not arrived)",
			resp.StatusCode, code, msg, time.Since(start).Round(100*time.Millisecond))
	}
}

// TestAttackPolygonTurnsHeldBySlowReaders: a polygon search holds its turn
// (one of four per process) until its answer is written, and the server
// has no write timeout. Four key-less connections that each ask, pipelined,
// 16 times for 1,000 Baltimore parcels (answers of about half a
// megabyte each, more than the sockets' buffers hold) and never read
// them block the four handlers in their writes: every other polygon search
// waits past its 10 s limit and answers 503 query_timeout, for as long as
// the four connections stay open (64 requests of one IP's 600 an hour).
func TestAttackPolygonTurnsHeldBySlowReaders(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	host := strings.TrimPrefix(e.records, "http://")
	big := `{"geometry":{"type":"Polygon","coordinates":[[[-76.72,39.20],[-76.52,39.20],[-76.52,39.38],[-76.72,39.38],[-76.72,39.20]]]},"limit":1000}`
	dialer := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for range 4 {
		conn, err := dialer.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for range 16 {
			fmt.Fprintf(conn, "POST /api/v1/parcels/query HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(big), big)
		}
	}
	time.Sleep(8 * time.Second)
	if st, b := get(t, e.records+"/healthz", nil); st != 200 {
		t.Logf("healthz: %d %s", st, b)
	}
	small := []byte(`{"geometry":{"type":"Polygon","coordinates":[[[-76.66,39.30],[-76.64,39.30],[-76.64,39.32],[-76.66,39.32],[-76.66,39.30]]]},"limit":5}`)
	client := &http.Client{Timeout: 25 * time.Second}
	start := time.Now()
	resp, err := client.Post(e.records+"/api/v1/parcels/query", "application/json", bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		code, msg := problemOf(b)
		t.Fatalf("a small polygon search while four clients do not read their answers: %d %s %q after %s, want 200 (the turns are held by handlers blocked writing)",
			resp.StatusCode, code, msg, time.Since(start).Round(100*time.Millisecond))
	}
}

// TestAttackHangUpInTurnIs503: a client that hangs up while its tile waits
// for a turn is logged and measured as a 503 query_timeout, a server
// error, where issue 36 asks a hang-up to be a 499: the gate answers with
// fail itself, not through httpx's respond, which knows hang-ups. Four
// tiles hold the turns behind a lock on the parcels read model (as a long
// load or migration would); a fifth client gives up after a second.
func TestAttackHangUpInTurnIs503(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "ARR_LOG_LEVEL=info")
	p := e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE rm_parcels.parcels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	x, y := tileOf(-76.65104057, 39.30941765, 14)
	tile := fmt.Sprintf("%s/api/v1/tiles/14/%d/%d.mvt", e.records, x, y)
	client := &http.Client{Timeout: 20 * time.Second}
	done := make(chan struct{}, 4)
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			if resp, err := client.Get(tile); err == nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(time.Second)
	hctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(hctx, http.MethodGet, tile+"?layers=tax_sale", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d before the hang-up", resp.StatusCode)
	}
	line := regexp.MustCompile(`msg="http request" service=records method=GET path=/api/v1/tiles/14/\d+/\d+\.mvt status=(\d+)[^\n]*`)
	var got []string
	eventually(t, 10*time.Second, "the hung-up request's access-log line", func() bool {
		got = line.FindStringSubmatch(p.logs.String())
		return got != nil
	})
	_ = tx.Rollback(ctx)
	for range 4 {
		<-done
	}
	if got[1] != "499" {
		t.Errorf("a hang-up while waiting for a tile turn is logged as %q, want status 499", got[0])
	}
}

// TestAttackDuplicateKeyByCase: docs/api-input.md says no JSON body names
// a member twice, and arr's own bodies name no member it does not know.
// httpx.UniqueKeys compares names byte for byte, but encoding/json matches
// them to fields case-insensitively: {"limit":1,"LIMIT":1000} passes the
// check and DisallowUnknownFields, and arr reads the last, limit 1000 (an
// upstream that reads names exactly, as the gateway's providers do, would
// read the first). It should be 400 duplicate_key (or unknown_field for
// LIMIT).
func TestAttackDuplicateKeyByCase(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	body := `{"geometry":{"type":"Polygon","coordinates":[[[-76.66,39.30],[-76.64,39.30],[-76.64,39.32],[-76.66,39.32],[-76.66,39.30]]]},"limit":1,"LIMIT":1000}`
	resp, err := http.Post(e.records+"/api/v1/parcels/query", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	code, _ := problemOf(b)
	if resp.StatusCode != 400 || (code != "duplicate_key" && code != "unknown_field" && code != "invalid_json") {
		var page struct {
			Count int `json:"count"`
			Limit int `json:"limit"`
		}
		_ = json.Unmarshal(b, &page)
		t.Fatalf("a body with limit and LIMIT: %d %s, count %d, limit %d; want 400 duplicate_key", resp.StatusCode, code, page.Count, page.Limit)
	}
}

// TestAttackListCountyNoSuchCounty: the list CSV rule refuses a county that
// is not a 5-digit FIPS code, but any five digits pass: 24150 (Baltimore
// City's 24510 with two digits swapped) is no county of the census
// gazetteer arr ships, and the rows import under it silently, where no
// parcel will ever match them. It should be an error naming the line, as
// "Baltimore City" is.
func TestAttackListCountyNoSuchCounty(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_MASTER_KEY="+testMasterKey)
	e.createAccount("county@example.com", "free")
	b, err := os.ReadFile(filepath.Join("testdata", "lists", "baltimore_vacants_county_name.csv"))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "vacants.csv")
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(string(b), "Baltimore City", "24150")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.arr("import", "list", "--email", "county@example.com", "--json", f)
	if code == 0 || !strings.Contains(errs, "line 2") {
		t.Fatalf("a list whose county 24150 is no county: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestAttackAccountListsPageUntimed: issue 36 asks every query a request
// runs to have a statement timeout, but the records service's account
// page GET /account/lists is mounted without one (it is in no table of
// statementTimeouts): behind a lock on the lists read model (a long
// import or a migration) it waits for as long as the lock is held,
// holding a connection of the main pool, instead of answering 503
// query_timeout within a route limit (10 s at most elsewhere).
func TestAttackAccountListsPageUntimed(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, st := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	e.createAccount("page@example.com", "free")
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := session(t, pool, cmds, "page@example.com")
	if status, _ := get(t, e.records+"/account/lists", map[string]string{"Cookie": "arr_session=" + token}); status != 200 {
		t.Fatalf("the lists page: %d", status)
	}
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE rm_lists.lists IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, e.records+"/account/lists", nil)
	req.Header.Set("Cookie", "arr_session="+token)
	start := time.Now()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET /account/lists behind a lock on the lists read model: no answer after %s (%v), want 503 within its statement timeout",
			time.Since(start).Round(100*time.Millisecond), err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Fatalf("GET /account/lists behind a lock: %d after %s, want 503", resp.StatusCode, time.Since(start).Round(100*time.Millisecond))
	}
}
