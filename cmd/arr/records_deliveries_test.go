package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
)

// hookEntry is one request the standardwebhooks receiver logged.
type hookEntry struct {
	Path     string `json:"path"`
	ID       string `json:"id"`
	At       string `json:"at"`
	Verified bool   `json:"verified"`
	Error    string `json:"error"`
	Payload  *struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      struct {
			ListID string `json:"list_id"`
			Row    int    `json:"row"`
			Parcel struct {
				County, APN, Address string
			} `json:"parcel"`
			Layer          string  `json:"layer"`
			SourceURL      string  `json:"source_url"`
			SourceDate     string  `json:"source_date"`
			FirstSeen      string  `json:"first_seen"`
			Motivation     float64 `json:"motivation"`
			WeightsVersion string  `json:"weights_version"`
		} `json:"data"`
	} `json:"payload"`
	Answer any  `json:"answer"`
	Acked  bool `json:"acked"`
}

// hookReceiver is scripts/clients/standardwebhooks/receiver.mjs, a
// webhook endpoint that verifies every delivery with the standardwebhooks
// npm library.
type hookReceiver struct {
	base string
}

func startHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	dir, _ := filepath.Abs("../../scripts/clients/standardwebhooks")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks", "package.json")); err != nil {
		t.Fatalf("the standardwebhooks npm package is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	cmd := exec.Command("node", "receiver.mjs")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		var v struct{ Port int }
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Port == 0 {
			t.Fatalf("receiver said %q (%v); stderr %s", l, err, stderr.String())
		}
		return &hookReceiver{base: fmt.Sprintf("http://127.0.0.1:%d", v.Port)}
	case <-time.After(30 * time.Second):
		t.Fatalf("the receiver did not start; stderr %s", stderr.String())
	}
	return nil
}

func (r *hookReceiver) post(t *testing.T, path, body string) {
	t.Helper()
	resp, err := http.Post(r.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("receiver %s: %d", path, resp.StatusCode)
	}
}

func (r *hookReceiver) mode(t *testing.T, path, mode string) {
	r.post(t, "/_mode", fmt.Sprintf(`{"path":%q,"mode":%q}`, path, mode))
}

func (r *hookReceiver) log(t *testing.T) []hookEntry {
	t.Helper()
	var l []hookEntry
	getJSON(t, r.base+"/_log", nil, 200, &l)
	return l
}

// waitLog polls the receiver's log until ok holds (a bound against
// hanging, not a timing check).
func (r *hookReceiver) waitLog(t *testing.T, what string, limit time.Duration, ok func([]hookEntry) bool) []hookEntry {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		l := r.log(t)
		if ok(l) {
			return l
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(l, "", " ")
			t.Fatalf("waiting for %s; the receiver's log:\n%s", what, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ackedIDs counts, per webhook-id on path, the 2xx answers written out.
func ackedIDs(l []hookEntry, path string) map[string]int {
	out := map[string]int{}
	for _, e := range l {
		if e.Path == path && e.Acked {
			out[e.ID]++
		}
	}
	return out
}

// deliveriesPage is GET /api/v1/monitors/{id}/deliveries.
type deliveriesPage struct {
	Data []struct {
		ID           string          `json:"id"`
		WebhookID    string          `json:"webhook_id"`
		Type         string          `json:"type"`
		Status       string          `json:"status"`
		AttemptCount int             `json:"attempt_count"`
		Payload      json.RawMessage `json:"payload"`
		Attempts     []struct {
			Attempt int    `json:"attempt"`
			Status  int    `json:"status"`
			Error   string `json:"error"`
			Outcome string `json:"outcome"`
		} `json:"attempts"`
	} `json:"data"`
	Total int `json:"total"`
}

// TestRecordsMonitorDeliveries: a monitor's webhook, verified with the
// standardwebhooks npm library, arrives after `arr load layer` newly names
// a parcel matched to a row of the watched list, and after a load stops
// naming one; a 500 is retried with the same webhook-id within 10 s;
// every attempt is in GET /api/v1/monitors/{id}/deliveries; a kill -9 of
// arr while a delivery is in flight sends it again after the restart and
// sends nothing that was acknowledged; a rebuild of the read model sends
// nothing; a webhook failing past ARR_MONITOR_DISABLE_AFTER disables its
// monitor (an event and a mail); erasing the account's contact data
// disables its monitors.
func TestRecordsMonitorDeliveries(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	hooks := startHookReceiver(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=false", "ARR_MASTER_KEY="+testMasterKey, "ARR_WEBHOOK_PRIVATE=allow",
		"ARR_MONITOR_DISABLE_AFTER=4s", "SMTP_URL="+mail.URL)
	proc := e.up()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("arr's log:\n%s", proc.logs.String())
		}
	})
	pool, _ := openStore(t, e.dbURL)
	e.createAccount("alice@example.com", "free")
	e.createAccount("bob@example.com", "free")
	alice, bob := e.mint("alice@example.com", "records"), e.mint("bob@example.com", "records")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Row 1 matches parcel 0101-001 by APN, row 2 parcel 0202-002 by
	// address; row 3 matches nothing.
	leads := write("leads.csv", "apn,county,address,phone\n0101-001,24510,100 Main St,410-555-0101\n,,200 OAK AVENUE,410-555-0102\n9999-999,24510,300 NONE ST,410-555-0103\n")
	var list struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&list, "import", "list", "--email", "alice@example.com", leads, "--json")
	type created struct {
		MonitorID string `json:"monitor_id"`
		Secret    string `json:"secret"`
	}
	var hook, taxSale created
	e.mustArr(&hook, "monitors", "create", "--email", "alice@example.com", "--list", list.ListID, "--url", hooks.base+"/hook", "--layers", "vacant", "--json")
	e.mustArr(&taxSale, "monitors", "create", "--email", "alice@example.com", "--list", list.ListID, "--url", hooks.base+"/tax", "--layers", "tax_sale", "--json")
	// The receiver verifies with /hook's secret: a delivery of another
	// monitor would fail verification there.
	hooks.post(t, "/_secret", hook.Secret)
	hooks.mode(t, "/hook", "fail-first")

	rowA := "0101-001,100 MAIN ST,2026-05-01,-76.6101,39.2901\n"
	rowB := "0202-002,200 OAK AVE,2026-05-02,-76.6102,39.2902\n"
	rowC := "0303-003,400 ELM ST,2026-05-03,-76.6103,39.2903\n"
	loads := 0
	load := func(rows ...string) {
		t.Helper()
		loads++
		f := write(fmt.Sprintf("vacant-%d.csv", loads), "apn,address,date,lon,lat\n"+strings.Join(rows, ""))
		if out, errs, code := e.arr("load", "layer", "--layer", "vacant", "--county", "24510", "--source-url", "https://example.org/vacant",
			"--source-date", fmt.Sprintf("2026-06-%02d", loads), f); code != 0 {
			t.Fatalf("load %d: exit %d %s %s", loads, code, out, errs)
		}
	}
	keyed := map[string]string{"X-API-Key": alice.Secret}
	deliveries := func(monitor string) deliveriesPage {
		var p deliveriesPage
		getJSON(t, e.records+"/api/v1/monitors/"+monitor+"/deliveries", keyed, 200, &p)
		return p
	}

	// 1. A load names rows 1 and 2's parcels: two deliveries, each
	// answered 500 first and retried with the same id.
	load(rowA, rowB, rowC)
	l := hooks.waitLog(t, "two deliveries acknowledged", 60*time.Second, func(l []hookEntry) bool { return len(ackedIDs(l, "/hook")) == 2 })
	first := map[string]time.Time{}
	for _, x := range l {
		if x.Path != "/hook" {
			t.Fatalf("a delivery to %s: the tax_sale monitor watches another layer", x.Path)
		}
		if !x.Verified || x.Payload == nil {
			t.Fatalf("a delivery standardwebhooks does not verify: %+v", x)
		}
		at, _ := time.Parse(time.RFC3339Nano, x.At)
		if f, ok := first[x.ID]; !ok {
			first[x.ID] = at
			if x.Answer != float64(500) {
				t.Fatalf("first attempt of %s answered %v", x.ID, x.Answer)
			}
		} else if gap := at.Sub(f); gap > 10*time.Second || gap < 4*time.Second {
			t.Fatalf("the retry of %s came %s after the first attempt (the first retry is due 5 s after it)", x.ID, gap)
		}
		p := x.Payload
		if p.Type != "parcel.signal_added" || p.Data.ListID != list.ListID || p.Data.Layer != "vacant" || p.Data.SourceURL != "https://example.org/vacant" ||
			p.Data.SourceDate != "2026-06-01" || p.Data.FirstSeen == "" || p.Data.Motivation <= 0 || p.Data.Parcel.County != "24510" {
			t.Fatalf("payload %+v", p)
		}
		if want := map[int]string{1: "0101-001", 2: "0202-002"}[p.Data.Row]; want != p.Data.Parcel.APN {
			t.Fatalf("row %d named parcel %q", p.Data.Row, p.Data.Parcel.APN)
		}
		if !strings.HasPrefix(x.ID, "msg_") {
			t.Fatalf("webhook-id %q", x.ID)
		}
	}
	if len(l) != 4 {
		t.Fatalf("%d requests for 2 deliveries failing once each", len(l))
	}
	raw, _ := json.Marshal(l)
	if strings.Contains(string(raw), "410-555") {
		t.Fatal("a delivery carries a list row's contact data")
	}

	// Every attempt is in the deliveries read model; another account's
	// monitor reads as missing; bad parameters are 400.
	var page deliveriesPage
	deadline := time.Now().Add(30 * time.Second)
	for page = deliveries(hook.MonitorID); (page.Total != 2 || page.Data[0].Status != "delivered" || page.Data[1].Status != "delivered") && time.Now().Before(deadline); page = deliveries(hook.MonitorID) {
		time.Sleep(200 * time.Millisecond)
	}
	for _, d := range page.Data {
		if d.Status != "delivered" || d.AttemptCount != 2 || len(d.Attempts) != 2 || d.Attempts[0].Status != 500 || d.Attempts[0].Outcome != "retrying" ||
			d.Attempts[1].Status != 200 || d.Attempts[1].Outcome != "delivered" || first[d.WebhookID].IsZero() {
			t.Fatalf("delivery %+v", d)
		}
	}
	getJSON(t, e.records+"/api/v1/monitors/"+hook.MonitorID+"/deliveries", map[string]string{"X-API-Key": bob.Secret}, 404, nil)
	getJSON(t, e.records+"/api/v1/monitors/"+hook.MonitorID+"/deliveries", nil, 401, nil)
	getJSON(t, e.records+"/api/v1/monitors/not-a-uuid/deliveries", keyed, 400, nil)
	getJSON(t, e.records+"/api/v1/monitors/"+hook.MonitorID+"/deliveries?status=lost", keyed, 400, nil)
	var none deliveriesPage
	getJSON(t, e.records+"/api/v1/monitors/"+hook.MonitorID+"/deliveries?status=pending", keyed, 200, &none)
	if none.Total != 0 {
		t.Fatalf("pending: %+v", none)
	}

	// 2. A load that no longer names row 1's parcel: signal_removed, for
	// row 1 only (row 2's parcel stays named: nothing new).
	hooks.mode(t, "/hook", "ok")
	load(rowB, rowC)
	l = hooks.waitLog(t, "the removal", 60*time.Second, func(l []hookEntry) bool { return len(ackedIDs(l, "/hook")) == 3 })
	last := l[len(l)-1]
	if last.Payload == nil || last.Payload.Type != "parcel.signal_removed" || last.Payload.Data.Row != 1 || len(l) != 5 {
		t.Fatalf("after the second load: %+v (%d requests)", last, len(l))
	}

	// 3. kill -9 while a delivery is in flight: after the restart it is
	// sent again with the same id; nothing acknowledged is sent again.
	hooks.mode(t, "/hook", "hold")
	load(rowA, rowB, rowC)
	l = hooks.waitLog(t, "the held delivery", 60*time.Second, func(l []hookEntry) bool { return len(l) == 6 && l[5].Answer == "held" })
	held := l[5].ID
	proc.kill()
	hooks.waitLog(t, "the held connection closing", 10*time.Second, func(l []hookEntry) bool { return l[5].Answer == "closed" })
	hooks.mode(t, "/hook", "ok")
	e.up()
	l = hooks.waitLog(t, "the held delivery sent again", 60*time.Second, func(l []hookEntry) bool { return ackedIDs(l, "/hook")[held] == 1 })
	time.Sleep(3 * time.Second) // a pass or two more: nothing else may come
	l = hooks.log(t)
	for id, n := range ackedIDs(l, "/hook") {
		if n != 1 {
			t.Fatalf("delivery %s acknowledged %d times", id, n)
		}
	}
	if len(l) != 7 || l[6].ID != held || !l[6].Verified || l[6].Payload.Type != "parcel.signal_added" {
		t.Fatalf("after the restart: %d requests, the last %+v", len(l), l[len(l)-1])
	}

	// 4. A rebuild of the read model makes the same deliveries, done:
	// nothing is sent.
	if out, errs, code := e.arr("projections", "rebuild", "parcels"); code != 0 {
		t.Fatalf("rebuild: %d %s %s", code, out, errs)
	}
	time.Sleep(3 * time.Second)
	if n := len(hooks.log(t)); n != 7 {
		t.Fatalf("%d requests after the rebuild (7 before)", n)
	}
	if p := deliveries(hook.MonitorID); p.Total != 4 {
		t.Fatalf("after the rebuild: %d deliveries", p.Total)
	} else {
		for _, d := range p.Data {
			if d.Status != "delivered" {
				t.Fatalf("after the rebuild: %+v", d)
			}
		}
	}

	// 5. A webhook that fails past ARR_MONITOR_DISABLE_AFTER (4 s here):
	// its monitor is disabled, with an event and a mail.
	var dead created
	e.mustArr(&dead, "monitors", "create", "--email", "alice@example.com", "--list", list.ListID, "--url", hooks.base+"/dead", "--json")
	hooks.mode(t, "/dead", "fail")
	waitCaughtUp(t, pool, 60*time.Second)
	load(rowB, rowC)
	m := mail.Next(t)
	if len(m.To) != 1 || m.To[0] != "alice@example.com" || !strings.Contains(m.Subject, "monitor was disabled") || !strings.Contains(m.Text, dead.MonitorID) {
		t.Fatalf("mail %+v", m)
	}
	if strings.Contains(m.Text, "whsec_") {
		t.Fatal("the mail holds a secret")
	}
	var events int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE stream_id = 'monitor-' || $1 AND event_type = 'MonitorDisabled'`, dead.MonitorID).Scan(&events); err != nil || events != 1 {
		t.Fatalf("MonitorDisabled events: %d %v", events, err)
	}
	waitCaughtUp(t, pool, 60*time.Second)
	var mons struct {
		Data []struct {
			MonitorID      string  `json:"monitor_id"`
			Status         string  `json:"status"`
			DisabledReason *string `json:"disabled_reason"`
		} `json:"data"`
	}
	getJSON(t, e.records+"/api/v1/monitors", keyed, 200, &mons)
	status := map[string]string{}
	for _, x := range mons.Data {
		status[x.MonitorID] = x.Status
	}
	if status[dead.MonitorID] != "disabled" || status[hook.MonitorID] != "active" {
		t.Fatalf("monitors after the failures: %+v", mons.Data)
	}
	if got := hooks.log(t); len(ackedIDs(got, "/hook")) != 5 {
		t.Fatalf("/hook acknowledged %d deliveries (want 5)", len(ackedIDs(got, "/hook")))
	}

	// 6. Erasing the account's contact data destroys the key that sealed
	// its monitors' secrets: they are disabled, and a load sends nothing.
	e.mustArr(nil, "accounts", "erase-contact-data", "--email", "alice@example.com", "--json")
	waitCaughtUp(t, pool, 60*time.Second)
	before := len(hooks.log(t))
	load(rowA, rowB, rowC)
	waitCaughtUp(t, pool, 60*time.Second)
	time.Sleep(3 * time.Second)
	if n := len(hooks.log(t)); n != before {
		t.Fatalf("%d requests after the erasure (%d before)", n, before)
	}
	getJSON(t, e.records+"/api/v1/monitors", keyed, 200, &mons)
	for _, x := range mons.Data {
		if x.Status != "disabled" || x.DisabledReason == nil {
			t.Fatalf("after the erasure: %+v", x)
		}
	}
}
