package main_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
)

// TestRecordsMonitors sets up list monitors from the CLI and reads them
// with the keyed API: the secret is shown once and is in no response and
// not in clear in the log; the URL is checked (a literal private address
// is refused without a connection); a monitor watches only its own
// account's list; delete stops it.
func TestRecordsMonitors(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=false", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	e.createAccount("alice@example.com", "free")
	e.createAccount("bob@example.com", "free")
	alice, bob := e.mint("alice@example.com", "records"), e.mint("bob@example.com", "records")
	file := filepath.Join(t.TempDir(), "leads.csv")
	if err := os.WriteFile(file, []byte("apn,county,address\n0001 003,24510,2041 W NORTH AVE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var list struct {
		ListID string `json:"list_id"`
	}
	e.mustArr(&list, "import", "list", "--email", "alice@example.com", file, "--json")

	for _, c := range []struct{ name, url, layers, want string }{
		{"a private address", "http://10.0.0.1/hook", "", "not public"},
		{"loopback", "http://127.0.0.1:9/hook", "", "not public"},
		{"IPv6 loopback", "http://[::1]/hook", "", "not public"},
		{"localhost", "http://localhost/hook", "", "this machine"},
		{"metadata address", "http://169.254.169.254/latest", "", "not public"},
		{"ftp", "ftp://example.com/hook", "", "absolute http(s) URL"},
		{"relative", "/hook", "", "absolute http(s) URL"},
		{"user info", "https://user:pw@example.com/hook", "", "user info"},
		{"an unknown layer", "https://example.com/hook", "vacant,haunted", "unknown layer"},
	} {
		out, errs, code := e.arr("monitors", "create", "--email", "alice@example.com", "--list", list.ListID, "--url", c.url, "--layers", c.layers)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Contains(errs, "whsec_") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q (want %q)", c.name, code, out, errs, c.want)
		}
	}
	// Bob cannot watch Alice's list.
	if _, errs, code := e.arr("monitors", "create", "--email", "bob@example.com", "--list", list.ListID, "--url", "https://example.com/hook"); code == 0 || !strings.Contains(errs, "no list") {
		t.Fatalf("bob on alice's list: exit %d %s", code, errs)
	}

	var created struct {
		MonitorID string   `json:"monitor_id"`
		ListID    string   `json:"list_id"`
		URL       string   `json:"url"`
		Layers    []string `json:"layers"`
		Secret    string   `json:"secret"`
	}
	e.mustArr(&created, "monitors", "create", "--email", "alice@example.com", "--list", list.ListID, "--url", "https://example.com/hooks/arr?token=t1",
		"--layers", "vacant,tax_sale", "--json")
	if !strings.HasPrefix(created.Secret, "whsec_") || created.ListID != list.ListID || len(created.Layers) != 2 {
		t.Fatalf("created %+v", created)
	}

	type monitorsPage struct {
		Data []struct {
			MonitorID string  `json:"monitor_id"`
			ListID    string  `json:"list_id"`
			URL       string  `json:"url"`
			DeletedAt *string `json:"deleted_at"`
		} `json:"data"`
		Total int `json:"total"`
	}
	var mine, theirs monitorsPage
	body := getJSON(t, e.records+"/api/v1/monitors", map[string]string{"X-API-Key": alice.Secret}, 200, &mine)
	if mine.Total != 1 || len(mine.Data) != 1 || mine.Data[0].MonitorID != created.MonitorID || mine.Data[0].URL != created.URL {
		t.Fatalf("alice's monitors: %s", body)
	}
	if strings.Contains(string(body), "whsec_") || strings.Contains(string(body), "secret") {
		t.Fatalf("the API shows the secret: %s", body)
	}
	getJSON(t, e.records+"/api/v1/monitors", map[string]string{"X-API-Key": bob.Secret}, 200, &theirs)
	if theirs.Total != 0 || len(theirs.Data) != 0 {
		t.Fatalf("bob sees %+v", theirs)
	}
	getJSON(t, e.records+"/api/v1/monitors", nil, 401, nil)
	getJSON(t, e.records+"/api/v1/monitors?limit=0", map[string]string{"X-API-Key": alice.Secret}, 400, nil)

	// The log holds the secret sealed, never in clear.
	pool, st := openStore(t, e.dbURL)
	var clear int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE data::text LIKE '%' || $1 || '%'`, created.Secret[len("whsec_"):]).Scan(&clear); err != nil {
		t.Fatal(err)
	}
	if clear != 0 {
		t.Fatalf("%d events hold the secret in clear", clear)
	}

	// Bob cannot delete Alice's monitor; Alice can, twice.
	if _, errs, code := e.arr("monitors", "delete", "--email", "bob@example.com", created.MonitorID); code == 0 || !strings.Contains(errs, "no monitor") {
		t.Fatalf("bob deleting alice's monitor: exit %d %s", code, errs)
	}
	for range 2 {
		if out, errs, code := e.arr("monitors", "delete", "--email", "alice@example.com", created.MonitorID); code != 0 || !strings.Contains(out, "deleted") {
			t.Fatalf("delete: exit %d %s %s", code, out, errs)
		}
	}
	getJSON(t, e.records+"/api/v1/monitors", map[string]string{"X-API-Key": alice.Secret}, 200, &mine)
	if mine.Total != 0 {
		t.Fatalf("after delete: %+v", mine)
	}
	getJSON(t, e.records+"/api/v1/monitors?deleted=1", map[string]string{"X-API-Key": alice.Secret}, 200, &mine)
	if mine.Total != 1 || mine.Data[0].DeletedAt == nil {
		t.Fatalf("deleted=1: %+v", mine)
	}
	var listed struct {
		Data []json.RawMessage `json:"data"`
	}
	e.mustArr(&listed, "monitors", "list", "--email", "alice@example.com", "--deleted", "--json")
	if len(listed.Data) != 1 {
		t.Fatalf("arr monitors list --deleted: %d", len(listed.Data))
	}

	t.Run("the account page", func(t *testing.T) {
		cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
		if err != nil {
			t.Fatal(err)
		}
		token, _ := session(t, pool, cmds, "alice@example.com")
		post := func(path string, form url.Values) (int, string) {
			t.Helper()
			form.Set("csrf_token", csrfFor(token))
			req, _ := http.NewRequest(http.MethodPost, e.records+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Cookie", "arr_session="+token)
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		st, page := post("/account/monitors", url.Values{"list_id": {list.ListID}, "url": {"http://192.168.1.10/hook"}})
		if st != 400 || !strings.Contains(page, "not public") || strings.Contains(page, "whsec_") {
			t.Fatalf("a private URL from the page: %d", st)
		}
		st, page = post("/account/monitors", url.Values{"list_id": {list.ListID}, "url": {"https://example.com/from-page"}, "layers": {"vacant"}})
		secret := regexp.MustCompile(`id="monitor-secret">(whsec_[^<]+)<`).FindStringSubmatch(page)
		if st != 201 || secret == nil || !strings.Contains(page, "https://example.com/from-page") {
			t.Fatalf("create from the page: %d %s", st, page)
		}
		// As the browser shows it (html/template writes + as &#43;).
		secret[1] = html.UnescapeString(secret[1])
		if _, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret[1], "whsec_")); err != nil {
			t.Fatalf("the page's secret %q: %v", secret[1], err)
		}
		// Shown once: the page again has the monitor, not its secret.
		status, again := get(t, e.records+"/account/lists", map[string]string{"Cookie": "arr_session=" + token})
		if status != 200 || strings.Contains(string(again), "monitor-secret") || strings.Contains(html.UnescapeString(string(again)), secret[1]) ||
			!strings.Contains(string(again), "https://example.com/from-page") {
			t.Fatalf("the lists page after: %d", status)
		}
		id := regexp.MustCompile(`/account/monitors/([0-9a-f-]{36})/delete`).FindStringSubmatch(string(again))
		if id == nil {
			t.Fatal("no delete form on the page")
		}
		if st, _ := post("/account/monitors/"+id[1]+"/delete", url.Values{}); st != 303 {
			t.Fatalf("delete from the page: %d", st)
		}
		// Without the CSRF token nothing is created.
		req, _ := http.NewRequest(http.MethodPost, e.records+"/account/monitors", strings.NewReader("list_id="+list.ListID+"&url=https://example.com/x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", "arr_session="+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Fatalf("no CSRF token: %d", resp.StatusCode)
		}
		getJSON(t, e.records+"/api/v1/monitors", map[string]string{"X-API-Key": alice.Secret}, 200, &mine)
		if mine.Total != 0 {
			t.Fatalf("after the page's delete: %+v", mine)
		}
	})
}
