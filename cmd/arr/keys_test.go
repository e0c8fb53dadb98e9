package main_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// keyedGETs lists the service's GET operations that need a key, read from
// its own OpenAPI document, so every keyed endpoint added later is covered.
func keyedGETs(t *testing.T, base string) []string {
	t.Helper()
	code, body := get(t, base+"/openapi.json", nil)
	if code != 200 {
		t.Fatalf("GET %s/openapi.json: %d", base, code)
	}
	var doc struct {
		Security []map[string][]string `json:"security"`
		Paths    map[string]map[string]struct {
			Security   *[]map[string][]string `json:"security"`
			Parameters []struct {
				In       string `json:"in"`
				Required bool   `json:"required"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("decoding openapi: %v", err)
	}
	var out []string
	for path, ops := range doc.Paths {
		op, ok := ops["get"]
		if !ok || strings.Contains(path, "{") {
			continue
		}
		required := false // a GET that needs a query parameter is not a bare probe
		for _, p := range op.Parameters {
			required = required || (p.In == "query" && p.Required)
		}
		if required {
			continue
		}
		sec := doc.Security
		if op.Security != nil {
			sec = *op.Security
		}
		if keyed(sec) {
			out = append(out, path)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s documents no keyed GET endpoint", base)
	}
	return out
}

func TestKeyLifecycle(t *testing.T) {
	e := newEnv(t)
	e.up()
	e.createAccount("owner@example.com", "free")
	e.createAccount("other@example.com", "pro")

	var secrets []string
	for _, svc := range []string{"answer", "gateway", "records"} {
		t.Run(svc, func(t *testing.T) {
			k := e.mint("owner@example.com", svc)
			secrets = append(secrets, k.Secret)
			if !strings.HasPrefix(k.Secret, k.Prefix) || k.Prefix == "" {
				t.Fatalf("secret does not start with its prefix %q", k.Prefix)
			}
			base := e.base(svc)
			paths := keyedGETs(t, base)
			headers := []map[string]string{{"Authorization": "Bearer " + k.Secret}}
			if svc == "records" {
				headers = append(headers, map[string]string{"X-API-Key": k.Secret})
			}
			// Minted with the CLI: authenticates at once, on every keyed endpoint.
			for _, p := range paths {
				for _, h := range headers {
					if code, body := get(t, base+p, h); code != 200 {
						t.Fatalf("GET %s with a fresh key (%v): %d %s", p, keysOf(h), code, body)
					}
				}
				code, body := get(t, base+p, nil)
				assertAuthError(t, svc, code, body)
			}
			// A key of another service, or X-API-Key where only Bearer is allowed, is refused.
			other := e.mint("other@example.com", map[string]string{"answer": "gateway", "gateway": "records", "records": "answer"}[svc])
			code, body := get(t, base+paths[0], map[string]string{"Authorization": "Bearer " + other.Secret})
			assertAuthError(t, svc, code, body)
			if svc != "records" {
				code, body := get(t, base+paths[0], map[string]string{"X-API-Key": k.Secret})
				assertAuthError(t, svc, code, body)
			}
			// Revoked: 401 at once.
			e.mustArr(nil, "keys", "revoke", "--id", k.ID, "--json")
			for _, p := range paths {
				for _, h := range headers {
					code, body := get(t, base+p, h)
					assertAuthError(t, svc, code, body)
				}
			}
		})
	}

	// Lag and throughput of the projections, and HTTP traffic, are exported.
	code, metrics := get(t, e.gateway+"/metrics", nil)
	for _, series := range []string{`arr_projection_lag_events{projection="identity"}`, `arr_projection_events_total{projection="identity"}`,
		`arr_projection_position{projection="logstats"}`, `arr_http_requests_total{method="GET",route="/v1/key",service="gateway",status="401"}`} {
		if code != 200 || !strings.Contains(string(metrics), series) {
			t.Fatalf("/metrics (%d) lacks %s", code, series)
		}
	}

	// No plaintext key anywhere in the database.
	dump, err := exec.Command("pg_dump", "--no-owner", e.dbURL).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	if len(dump) < 1000 || !strings.Contains(string(dump), "KeyIssued") {
		t.Fatalf("the dump (%d bytes) does not look like the database", len(dump))
	}
	for _, s := range secrets {
		if strings.Contains(string(dump), s) || strings.Contains(string(dump), s[8:]) {
			t.Fatalf("a plaintext key appears in the database dump")
		}
	}
}

// keyed reports whether a security requirement list takes an API key
// (session-only endpoints, like the gateway's /v1/me, do not).
// keyed reports whether an operation's security requires a key: one of
// its requirements names a key scheme, and none is the empty requirement
// {} (OpenAPI's "no credentials needed": the key is optional).
func keyed(sec []map[string][]string) bool {
	named := false
	for _, req := range sec {
		if len(req) == 0 {
			return false
		}
		for scheme := range req {
			named = named || scheme == "bearerAuth" || scheme == "apiKeyHeader"
		}
	}
	return named
}

func keysOf(h map[string]string) []string {
	var out []string
	for k := range h {
		out = append(out, k)
	}
	return out
}

// assertAuthError checks a 401 in the service's error shape.
func assertAuthError(t *testing.T, svc string, code int, body []byte) {
	t.Helper()
	if code != 401 {
		t.Fatalf("status %d, want 401; body %s", code, body)
	}
	var b struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    string  `json:"code"`
			Status  int     `json:"status"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Error.Message == "" || b.Error.Code == "" {
		t.Fatalf("401 body %s is not the error shape", body)
	}
	if svc == "gateway" && b.Error.Type != "authentication_error" {
		t.Fatalf("gateway 401 type = %q, want authentication_error (OpenAI shape)", b.Error.Type)
	}
	if svc != "gateway" && b.Error.Status != 401 {
		t.Fatalf("%s 401 body status = %d", svc, b.Error.Status)
	}
}

func TestRecordsKeyLimitUnderConcurrentMints(t *testing.T) {
	e := newEnv(t)
	e.createAccount("busy@example.com", "free")
	const n = 8
	type result struct {
		out, errs string
		code      int
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			o, er, c := e.arr("keys", "mint", "--email", "busy@example.com", "--service", "records", "--json")
			results[i] = result{o, er, c}
		}(i)
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, r := range results {
		switch {
		case r.code == 0:
			ok++
		case r.code == 2 && strings.Contains(r.errs, "409 key_limit_reached") && strings.Contains(r.errs, "5 active records keys"):
			refused++
		default:
			t.Errorf("unexpected mint result: exit %d, stderr %s", r.code, r.errs)
		}
	}
	if ok != 5 || refused != n-5 {
		t.Fatalf("%d mints succeeded and %d were refused; want 5 and %d", ok, refused, n-5)
	}
	var keys []struct {
		Service   string     `json:"service"`
		RevokedAt *time.Time `json:"revoked_at"`
	}
	e.mustArr(&keys, "keys", "list", "--email", "busy@example.com", "--json")
	if len(keys) != 5 {
		t.Fatalf("account holds %d records keys, want 5", len(keys))
	}
}
