package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMonitorURLHostForms: a monitor's URL is checked with the host
// normalized as the resolver reads it, by the same classification the
// delivery guard uses: every numeric IPv4 form, a trailing dot, case and
// IPv4-mapped IPv6 of a refused address are refused at creation, without
// a DNS look-up. (That a public host in those forms is stored as the
// address it is, TestParseHost shows without making a monitor that a
// delivery could dial.)
func TestMonitorURLHostForms(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	e.createAccount("forms@example.com", "free")
	file := filepath.Join(t.TempDir(), "leads.csv")
	if err := os.WriteFile(file, []byte("apn,county,address\n0001 003,24510,2041 W NORTH AVE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var list struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&list, "import", "list", "--email", "forms@example.com", file, "--json")
	for _, u := range []string{
		"http://2130706433/hook",                   // 127.0.0.1 as one decimal number
		"http://0x7f.1/hook",                       // hex and a short form
		"http://127.1/hook",                        // a short form
		"http://0177.0.0.1/hook",                   // octal
		"http://0x7f000001/hook",                   // one hex number
		"http://127.0.0.1./hook",                   // a trailing dot
		"http://LOCALHOST./hook",                   // case and a trailing dot
		"http://a.b.localhost/hook",                // a localhost subdomain
		"http://[::ffff:127.0.0.1]/hook",           // IPv4-mapped IPv6
		"http://[::ffff:7f00:1]/hook",              // the same in hex
		"http://[0:0:0:0:0:ffff:a9fe:a9fe]/latest", // mapped metadata address
		"http://012.0.0.1/hook",                    // octal 10.0.0.1
		"http://167772161/hook",                    // decimal 10.0.0.1
		"http://0xa9.0xfe.0xa9.0xfe/x",             // hex 169.254.169.254
	} {
		out, errs, code := e.arr("monitors", "create", "--email", "forms@example.com", "--list", list.ListID, "--url", u, "--json")
		if code == 0 || !strings.Contains(errs, "public") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want refused as not public", u, code, out, errs)
		}
	}
}

// TestMonitorDeliveryErrorHidesAddress: a delivery the SSRF guard refuses
// for a name is shown to the account (GET /api/v1/monitors/{id}/deliveries)
// without what the name resolved to. The monitor's URL, to localhost, was
// accepted while private webhooks were allowed; arr then runs with them
// denied, so the delivery is refused (nothing listens there either).
func TestMonitorDeliveryErrorHidesAddress(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_MASTER_KEY="+testMasterKey, "ARR_WEBHOOK_PRIVATE=allow")
	p := e.up()
	e.createAccount("hidden@example.com", "free")
	key := e.mint("hidden@example.com", "records")
	dir := t.TempDir()
	leads := filepath.Join(dir, "leads.csv")
	if err := os.WriteFile(leads, []byte("apn,county,address\n0101-001,24510,100 Main St\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var list struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&list, "import", "list", "--email", "hidden@example.com", leads, "--json")
	var mon struct {
		MonitorID string `json:"monitor_id"`
	}
	e.mustArr(&mon, "monitors", "create", "--email", "hidden@example.com", "--list", list.ListID, "--url", "http://localhost:"+strings.Split(freeAddr(t), ":")[1]+"/hook", "--json")
	p.stop(t)
	e.extraEnv = append(e.extraEnv, "ARR_WEBHOOK_PRIVATE=deny")
	e.up()
	layer := filepath.Join(dir, "vacant.csv")
	if err := os.WriteFile(layer, []byte("apn,address,date,lon,lat\n0101-001,100 MAIN ST,2026-05-01,-76.6101,39.2901\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := e.arr("load", "layer", "--layer", "vacant", "--county", "24510", "--source-url", "https://example.org/vacant", "--source-date", "2026-06-01", layer); code != 0 {
		t.Fatalf("load: exit %d %s %s", code, out, errs)
	}
	var page deliveriesPage
	eventually(t, 30*time.Second, "a refused delivery attempt", func() bool {
		page = deliveriesPage{}
		getJSON(t, e.records+"/api/v1/monitors/"+mon.MonitorID+"/deliveries", map[string]string{"X-API-Key": key.Secret}, 200, &page)
		return len(page.Data) > 0 && len(page.Data[0].Attempts) > 0
	})
	got := page.Data[0].Attempts[0].Error
	if !strings.Contains(got, "SSRF guard") || strings.Contains(got, "127.0.0.1") || strings.Contains(got, "::1") {
		t.Fatalf("the account is shown %q: want the guard's refusal without the address localhost resolves to", got)
	}
}
