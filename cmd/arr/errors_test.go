package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// reply is one HTTP response of the error tests, its error body decoded in
// either shape: {"error":{"status","code","message","field"}} (answer,
// records) or the OpenAI {"error":{"message","type","param","code"}}
// (gateway).
type reply struct {
	status int
	header http.Header
	raw    []byte
	err    struct {
		Status  int     `json:"status"`
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Field   string  `json:"field"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
	}
}

// send makes one request to a server the test started and requires an
// error response to be JSON with a code and a message.
func send(t testing.TB, method, u string, headers map[string]string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body = nil
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	r.raw, _ = io.ReadAll(resp.Body)
	if r.status >= 400 {
		var b struct {
			Error json.RawMessage `json:"error"`
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%s %s: %d with Content-Type %q, want JSON: %.300s", method, u, r.status, ct, r.raw)
		}
		if err := json.Unmarshal(r.raw, &b); err != nil || json.Unmarshal(b.Error, &r.err) != nil || r.err.Code == "" || r.err.Message == "" {
			t.Fatalf("%s %s: %d body is not a JSON error with a code and a message: %.300s", method, u, r.status, r.raw)
		}
	}
	return r
}

// field is the parameter an error names, in either shape.
func (r reply) field() string {
	if r.err.Param != nil {
		return *r.err.Param
	}
	return r.err.Field
}

// TestErrorResponses: on the real `arr up`, malformed query and path
// parameters of every service are 400s with a stable code naming the
// parameter (never a 500); refused requests leave the quotas as they found
// them while served ones count; headers over the limit are a JSON 431,
// OpenAI-shaped on the gateway; 404, 405 and 413 are JSON.
func TestErrorResponses(t *testing.T) {
	e := newEnv(t)
	// No first-start seeding: it fetches records pages from 127.0.0.1,
	// which would count against the per-IP window the test reads.
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "REDIS_URL=", "ARR_ANSWER_SEED=off",
		"ARR_UPSTREAM_BASE_URL="+upstreamtest.Start(t).URL)
	p := e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	keys := map[string]mintedKey{}
	for _, svc := range []string{"answer", "gateway", "records"} {
		email := "errors-" + svc + "@example.com"
		e.createAccount(email, "free")
		keys[svc] = e.mint(email, svc)
	}
	auth := func(svc string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + keys[svc].Secret}
	}
	records := e.records + "/api/v1"
	const box = "bbox=-76.72,39.19,-76.52,39.38"

	t.Run("a cursor is opaque and belongs to its search", func(t *testing.T) {
		var page struct {
			NextCursor *string `json:"next_cursor"`
			Features   []any   `json:"features"`
		}
		getJSON(t, records+"/parcels?"+box+"&limit=1", nil, 200, &page)
		if page.NextCursor == nil || len(page.Features) != 1 {
			t.Fatalf("the first page of Baltimore has no next_cursor: %+v", page)
		}
		cur := url.QueryEscape(*page.NextCursor)
		getJSON(t, records+"/parcels?"+box+"&limit=1&cursor="+cur, nil, 200, &page)
		for _, tc := range []struct{ name, query string }{
			{"AAAA", box + "&cursor=AAAA"},
			{"not base64url", box + "&cursor=%25%25%25"},
			{"NUL", box + "&cursor=%00"},
			{"truncated", box + "&cursor=" + cur[:len(cur)-3]},
			{"another bbox", "bbox=-76.70,39.20,-76.60,39.30&cursor=" + cur},
			{"another layer filter", box + "&layers=vacant&cursor=" + cur},
			{"very long", box + "&cursor=" + strings.Repeat("A", 20000)},
		} {
			r := send(t, http.MethodGet, records+"/parcels?"+tc.query, nil, nil)
			if r.status != http.StatusBadRequest || r.err.Code != "invalid_cursor" || r.field() != "cursor" {
				t.Errorf("%s: %d %s (field %q), want 400 invalid_cursor on cursor: %s", tc.name, r.status, r.err.Code, r.field(), r.raw)
			}
		}
	})

	t.Run("malformed parameters are 400s naming the parameter", func(t *testing.T) {
		list := uuid.NewString()
		for _, tc := range []struct {
			name, svc, path string
			keyed           bool
			code, field     string
		}{
			{"signals county NUL", "records", "/api/v1/signals/0001%20006?county=%00", true, "invalid_county", "county"},
			{"signals county letters", "records", "/api/v1/signals/0001%20006?county=abcde", true, "invalid_county", "county"},
			{"signals id NUL", "records", "/api/v1/signals/%00", true, "id_control_character", "id"},
			{"signals id invalid UTF-8", "records", "/api/v1/signals/%FF%FE", true, "id_invalid_utf8", "id"},
			{"signals id too long", "records", "/api/v1/signals/" + strings.Repeat("9", 2001), true, "id_too_long", "id"},
			{"signals weights NUL", "records", "/api/v1/signals/0001%20006?weights=%00", true, "unknown_weights_version", "weights"},
			{"signals as_of", "records", "/api/v1/signals/0001%20006?as_of=%00", true, "invalid_as_of", "as_of"},
			{"rows limit", "records", "/api/v1/lists/" + list + "/rows?limit=%00", true, "invalid_limit", "limit"},
			{"rows offset", "records", "/api/v1/lists/" + list + "/rows?offset=-1", true, "invalid_offset", "offset"},
			{"rows signals flag", "records", "/api/v1/lists/" + list + "/rows?signals=%00", true, "invalid_signals", "signals"},
			{"parcels bbox NUL", "records", "/api/v1/parcels?bbox=%00", false, "bbox_arity", "bbox"},
			{"parcels layers NUL", "records", "/api/v1/parcels?" + box + "&layers=%00", false, "unknown_layer", "layers"},
			{"parcels limit", "records", "/api/v1/parcels?" + box + "&limit=1e3", false, "invalid_limit", "limit"},
			{"records layer NUL", "records", "/api/v1/records?layer=%00", false, "unknown_layer", "layer"},
			{"records county NUL", "records", "/api/v1/records?county=%00", false, "invalid_county", "county"},
			{"counties state NUL", "records", "/api/v1/counties?state=%00", false, "invalid_state", "state"},
			{"lenders offset", "records", "/api/v1/lenders?offset=x", false, "invalid_offset", "offset"},
			{"answer q NUL", "answer", "/api/v1/answer?q=%00what+is+a+lien", true, "q_control_character", "q"},
			{"answer q invalid UTF-8", "answer", "/api/v1/answer?q=what+is+a+lien%FF", true, "q_invalid_utf8", "q"},
			{"answer mode NUL", "answer", "/api/v1/answer?q=what+is+a+lien&mode=%00", true, "invalid_mode", "mode"},
			{"gateway usage days NUL", "gateway", "/v1/usage?days=%00", true, "invalid_days", "days"},
			{"gateway audit hash NUL", "gateway", "/v1/audit/%00", false, "invalid_audit_hash", "hash"},
		} {
			var h map[string]string
			if tc.keyed {
				h = auth(tc.svc)
			}
			r := send(t, http.MethodGet, e.base(tc.svc)+tc.path, h, nil)
			if r.status != http.StatusBadRequest || r.err.Code != tc.code || r.field() != tc.field {
				t.Errorf("%s: GET %s: %d %s (field %q), want 400 %s on %s: %s", tc.name, tc.path, r.status, r.err.Code, r.field(), tc.code, tc.field, r.raw)
			}
		}
		// A list id that is not a UUID names no list: 404, as documented.
		if r := send(t, http.MethodGet, records+"/lists/%00/rows", auth("records"), nil); r.status != http.StatusNotFound {
			t.Errorf("a list id with NUL: %d %s, want 404", r.status, r.raw)
		}
	})

	t.Run("refused requests do not use up the quota", func(t *testing.T) {
		type call struct {
			method, path string // path on the service's address
			body         []byte
		}
		getCall := func(path string) call { return call{http.MethodGet, path, nil} }
		chatCall := func(body string) call { return call{http.MethodPost, "/v1/chat/completions", []byte(body)} }
		for _, tc := range []struct {
			name, svc string
			keyed     bool
			served    call
			refused   []call // each answered with a 4xx other than 429
			bucket    string
			window    func(time.Time) ratelimit.Window
		}{
			{name: "answer", svc: "answer", keyed: true, served: getCall("/api/v1/key"),
				refused: []call{getCall("/api/v1/answer"), getCall("/api/v1/answer?q=%00"), getCall("/api/v1/answer?q=what+is+a+lien&mode=deep")}, // 400, 400, 403 on Free
				bucket:  ratelimit.KeyBucket(account.Answer, uuid.MustParse(keys["answer"].ID)), window: ratelimit.DayWindow},
			{name: "gateway", svc: "gateway", keyed: true, served: chatCall(`{"messages":[{"role":"user","content":"Say hello"}]}`),
				refused: []call{chatCall(`{}`), chatCall(`not json`), chatCall(`{"messages":[{"role":"user","content":"hi"}],"brand_pref":"openai"}`)}, // 400, 400, 403 on Free
				bucket:  ratelimit.AccountBucket(account.Gateway, account.IDForEmail("errors-gateway@example.com")), window: ratelimit.DayWindow},
			{name: "records", svc: "records", keyed: true, served: getCall("/api/v1/key"),
				refused: []call{getCall("/api/v1/lists/" + uuid.NewString() + "/rows"), getCall("/api/v1/lists/" + uuid.NewString() + "/rows?limit=0"), getCall("/api/v1/signals/%00")}, // 404, 400, 400
				bucket:  ratelimit.KeyBucket(account.Records, uuid.MustParse(keys["records"].ID)), window: ratelimit.HourWindow},
			{name: "records per IP (public)", svc: "records", served: getCall("/api/v1/layers"),
				refused: []call{getCall("/api/v1/parcels"), getCall("/api/v1/parcels?" + box + "&cursor=AAAA"), getCall("/api/v1/counties?state=ZZ")},
				bucket:  ratelimit.IPBucket(account.Records, "127.0.0.1"), window: ratelimit.HourWindow},
		} {
			t.Run(tc.name, func(t *testing.T) {
				do := func(c call) reply {
					var h map[string]string
					if tc.keyed {
						h = auth(tc.svc)
					}
					return send(t, c.method, e.base(tc.svc)+c.path, h, c.body)
				}
				w := awayFromWindowEnd(t, tc.window)
				counted := func() int64 {
					var n int64
					if err := pool.QueryRow(context.Background(), `SELECT coalesce((SELECT count FROM quota_counters WHERE bucket = $1 AND window_start = $2), 0)`,
						tc.bucket, w.Start).Scan(&n); err != nil {
						t.Fatal(err)
					}
					return n
				}
				remaining := func(r reply) int64 {
					n, err := strconv.ParseInt(r.header.Get("X-RateLimit-Remaining"), 10, 64)
					if err != nil {
						t.Fatalf("%d without X-RateLimit-Remaining: %v", r.status, r.header)
					}
					return n
				}
				first := do(tc.served)
				if first.status != http.StatusOK {
					t.Fatalf("served request: %d %s", first.status, first.raw)
				}
				left, before := remaining(first), counted()
				for i := 0; i < 4; i++ {
					for _, c := range tc.refused {
						r := do(c)
						if r.status < 400 || r.status >= 500 || r.status == http.StatusTooManyRequests {
							t.Fatalf("a refused request answered %d: %s", r.status, r.raw)
						}
						if got := remaining(r); got != left {
							t.Fatalf("refused request (%d %s): X-RateLimit-Remaining %d, want %d, unchanged", r.status, r.err.Code, got, left)
						}
					}
				}
				if got := counted(); got != before {
					t.Fatalf("after %d refused requests the window's counter is %d, want %d as before them", 4*len(tc.refused), got, before)
				}
				if r := do(tc.served); r.status != http.StatusOK || remaining(r) != left-1 || counted() != before+1 {
					t.Fatalf("the next served request: %d, X-RateLimit-Remaining %d and counter %d, want %d and %d", r.status, remaining(r), counted(), left-1, before+1)
				}
			})
		}
		// Usage counts the served keyed requests only: two per key.
		for _, svc := range []string{"answer", "gateway", "records"} {
			if got := usageCalls(t, pool, keys[svc].ID, 2); got != 2 {
				t.Errorf("%s: usage counts %d calls, want the 2 served", svc, got)
			}
		}
	})

	t.Run("100 KB of headers is a JSON 431 on each service", func(t *testing.T) {
		big := map[string]string{"X-Padding": strings.Repeat("a", 100<<10)}
		for _, tc := range []struct{ svc, path string }{
			{"answer", "/api/v1/answer?q=what+is+a+lien"},
			{"gateway", "/v1/models"},
			{"records", "/api/v1/parcels?" + box},
		} {
			r := send(t, http.MethodGet, e.base(tc.svc)+tc.path, big, nil)
			if r.status != http.StatusRequestHeaderFieldsTooLarge || r.err.Code != "headers_too_large" || r.header.Get("X-Request-Id") == "" {
				t.Errorf("%s: %d %s, want 431 headers_too_large with a request id: %.300s", tc.svc, r.status, r.err.Code, r.raw)
			}
			if tc.svc == "gateway" && r.err.Type != "invalid_request_error" {
				t.Errorf("gateway 431: type %q, want the OpenAI shape with invalid_request_error", r.err.Type)
			}
		}
	})

	t.Run("404, 405 and 413 are JSON on each service", func(t *testing.T) {
		for _, svc := range []string{"answer", "gateway", "records"} {
			base := e.base(svc)
			if r := send(t, http.MethodGet, base+"/no/such/route", nil, nil); r.status != http.StatusNotFound {
				t.Errorf("%s unknown route: %d", svc, r.status)
			}
			if r := send(t, http.MethodDelete, base+"/openapi.json", nil, nil); r.status != http.StatusMethodNotAllowed {
				t.Errorf("%s DELETE /openapi.json: %d", svc, r.status)
			}
			if r := send(t, http.MethodPost, base+"/healthz", nil, bytes.Repeat([]byte("x"), 5<<20)); r.status != http.StatusRequestEntityTooLarge {
				t.Errorf("%s 5 MiB body: %d", svc, r.status)
			}
		}
	})

	if m := regexp.MustCompile(`msg="http request".*status=5\d\d.*`).FindString(p.logs.String()); m != "" {
		t.Fatalf("a request of the test was answered with a 5xx: %s", m)
	}
}

// TestBadConfigurationStopsArr: bad values stop arr before it touches the
// database, with exit 2 and one line per bad setting naming the variable,
// the value and the accepted form.
func TestBadConfigurationStopsArr(t *testing.T) {
	e := &env{t: t, dbURL: "postgres://nobody@127.0.0.1:1/none?sslmode=disable"}
	e.extraEnv = []string{"ARR_PROJECTION_BATCH_SIZE=5k", "ARR_CACHE_ENTRIES=1e4", "ARR_SHUTDOWN_GRACE=20", "ARR_LOG_FORMAT=yaml",
		"ARR_UPSTREAM_MODEL=llama3.2", "ARR_UPSTREAM_BASE_URL="}
	out, errs, code := e.arr("migrate")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 2 || out != "" || len(lines) != 5 {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	for _, want := range []string{
		`ARR_PROJECTION_BATCH_SIZE="5k" (flag --arr-projection-batch-size): want a whole number from 1 to 100000`,
		`ARR_CACHE_ENTRIES="1e4" (flag --arr-cache-entries): want a whole number of at least 0`,
		`ARR_SHUTDOWN_GRACE="20" (flag --arr-shutdown-grace): want a positive duration with a unit`,
		`ARR_LOG_FORMAT="yaml" (flag --arr-log-format): want one of text, json`,
		`ARR_UPSTREAM_MODEL="llama3.2" (flag --arr-upstream-model): want only with ARR_UPSTREAM_BASE_URL`,
	} {
		if !strings.Contains(errs, "arr: configuration: "+want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// A flag is parsed as strictly as its variable.
	e.extraEnv = nil
	if _, errs, code := e.arr("migrate", "--arr-upstream-breaker-failures=0"); code != 2 || !strings.Contains(errs, `ARR_UPSTREAM_BREAKER_FAILURES="0"`) {
		t.Fatalf("flag: exit %d %s", code, errs)
	}
}
