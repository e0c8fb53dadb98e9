package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// partialReply is what came back for a request whose body was never
// finished.
type partialReply struct {
	reply
	took time.Duration
}

// sendPartial opens its own TCP connection to base (a server the test
// started on loopback), sends the request line, headers (Content-Length
// declared) and only the first bytes of the body, and waits at most wait
// for the response without sending the rest.
func sendPartial(t testing.TB, method, base, path string, headers map[string]string, declared int, sent []byte, wait time.Duration) partialReply {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatalf("dialing %s: %v", u.Host, err)
	}
	defer conn.Close()
	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, u.Host, declared)
	for k, v := range headers {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	head.Write(sent)
	start := time.Now()
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatalf("writing the request: %v", err)
	}
	_ = conn.SetReadDeadline(start.Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s %s with %d of %d body bytes sent: no response within %s (%v)", method, path, len(sent), declared, took.Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	r := partialReply{reply: reply{status: resp.StatusCode, header: resp.Header}, took: took}
	r.raw, _ = io.ReadAll(resp.Body)
	var b struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(r.raw, &b) != nil || json.Unmarshal(b.Error, &r.err) != nil {
		t.Fatalf("%s %s: %d body is not a JSON error: %.300s", method, path, r.status, r.raw)
	}
	return r
}

// refuseConnections makes PostgreSQL refuse new connections to the test's
// database (SQLSTATE 55000 at connect, "database … is not currently
// accepting connections") and ends arr's open ones, so that arr's pools
// must connect again. allow undoes it; a t.Cleanup does it too.
func refuseConnections(t *testing.T, dbURL string) (allow func()) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, migratetest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS false`, pgx.Identifier{name}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	allow = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, migratetest.AdminURL())
		if err != nil {
			t.Errorf("re-enabling connections: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS true`, pgx.Identifier{name}.Sanitize())); err != nil {
			t.Errorf("re-enabling connections: %v", err)
		}
	}
	t.Cleanup(allow)
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
		t.Fatal(err)
	}
	return allow
}

// TestStatusesOfRefusalsAndBodies (issue 23, finding 6): a database that
// refuses connections is an outage on every route (503
// database_unavailable with Retry-After, never 500); a body that stops
// arriving is 408 request_timeout, not an outage and not counted; a
// request without a valid key gets its 401 without its body being read;
// a body over the size limit is 413 on the gateway's completion routes too.
func TestStatusesOfRefusalsAndBodies(t *testing.T) {
	e := newEnv(t)
	up := upstreamtest.Start(t)
	e.extraEnv = append(e.extraEnv, "REDIS_URL=", "ARR_ANSWER_SEED=off", "ARR_UPSTREAM_BASE_URL="+up.URL, "ARR_UPSTREAM_API_KEY=sk-test-upstream",
		"ARR_UPSTREAM_TIMEOUT=5s", logKeyEnv(), "ARR_LOG_CHECKPOINT_INTERVAL=1s", "ARR_BODY_TIMEOUT=4s")
	p := e.up()
	pool := testPool(t, e)
	keys := map[string]string{}
	for _, svc := range []string{"answer", "gateway", "records"} {
		email := "statuses-" + svc + "@example.com"
		e.createAccount(email, "starter")
		keys[svc] = e.mint(email, svc).Secret
	}
	bearer := func(svc string) map[string]string { return map[string]string{"Authorization": "Bearer " + keys[svc]} }
	chat := []byte(`{"messages":[{"role":"user","content":"Say hello"}]}`)
	if r := send(t, http.MethodPost, e.gateway+"/v1/chat/completions", bearer("gateway"), chat); r.status != http.StatusOK {
		t.Fatalf("a completion: %d %s", r.status, r.raw)
	}

	t.Run("a body that stops arriving is 408, not an outage, and not counted", func(t *testing.T) {
		before := send(t, http.MethodPost, e.gateway+"/v1/chat/completions", bearer("gateway"), chat)
		if before.status != http.StatusOK {
			t.Fatalf("a completion: %d %s", before.status, before.raw)
		}
		head := logHead(t, pool)
		r := sendPartial(t, http.MethodPost, e.gateway, "/v1/chat/completions", bearer("gateway"), len(chat), chat[:12], 90*time.Second)
		if r.status != http.StatusRequestTimeout || r.err.Code != "request_timeout" || r.err.Type != "invalid_request_error" || r.took > 30*time.Second {
			t.Errorf("gateway completion whose body stops: %d %s after %s; want 408 request_timeout (invalid_request_error) after ARR_BODY_TIMEOUT (4s): %s",
				r.status, r.err.Code, r.took.Round(time.Millisecond), r.raw)
		}
		a := sendPartial(t, http.MethodPost, e.answer, "/api/v1/answer", bearer("answer"), 40, []byte(`{"q":`), 90*time.Second)
		if a.status != http.StatusRequestTimeout || a.err.Code != "request_timeout" || a.took > 30*time.Second {
			t.Errorf("answer whose body stops: %d %s after %s; want 408 request_timeout: %s", a.status, a.err.Code, a.took.Round(time.Millisecond), a.raw)
		}
		if got := appendedSince(t, pool, head); len(got) > 0 {
			t.Errorf("the timed-out requests appended %v", got)
		}
		after := send(t, http.MethodPost, e.gateway+"/v1/chat/completions", bearer("gateway"), chat)
		b4, _ := strconv.Atoi(before.header.Get("X-RateLimit-Remaining"))
		af, _ := strconv.Atoi(after.header.Get("X-RateLimit-Remaining"))
		if after.status != http.StatusOK || af != b4-1 {
			t.Errorf("X-RateLimit-Remaining went from %d to %d over a timed-out request and a completion (%d); want one less: the timed-out request is not counted", b4, af, after.status)
		}
		if logs := p.logs.String(); strings.Contains(logs, "database unavailable") || strings.Contains(logs, "status=503") {
			t.Errorf("a slow client body was logged as an outage:\n%s", logs)
		}
	})

	t.Run("a request without a valid key gets its 401 before its body is read", func(t *testing.T) {
		for _, tc := range []struct {
			name, base, path string
			headers          map[string]string
		}{
			{"gateway, no key", e.gateway, "/v1/chat/completions", nil},
			{"gateway, wrong key", e.gateway, "/v1/chat/completions", map[string]string{"Authorization": "Bearer arr_gw_not_a_key"}},
			{"gateway Responses, no key", e.gateway, "/v1/responses", nil},
			{"answer, no key", e.answer, "/api/v1/answer", nil},
		} {
			r := sendPartial(t, http.MethodPost, tc.base, tc.path, tc.headers, 1000, []byte(`{"messages":[`), 60*time.Second)
			if r.status != http.StatusUnauthorized || r.took > 2*time.Second {
				t.Errorf("%s: %d %s after %s with the body unfinished; want 401 at once, not after the body deadline (4s): %s",
					tc.name, r.status, r.err.Code, r.took.Round(time.Millisecond), r.raw)
			}
		}
	})

	t.Run("a body over the limit is 413", func(t *testing.T) {
		big := append([]byte(`{"messages":[{"role":"user","content":"`), bytes.Repeat([]byte("a"), 4<<20)...)
		big = append(big, `"}]}`...)
		for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
			r := send(t, http.MethodPost, e.gateway+path, bearer("gateway"), big)
			if r.status != http.StatusRequestEntityTooLarge || r.err.Code != "body_too_large" || r.err.Type != "invalid_request_error" {
				t.Errorf("%s with a %d-byte body: %d %s %s; want 413 body_too_large (invalid_request_error)", path, len(big), r.status, r.err.Type, r.err.Code)
			}
			// Without a Content-Length (chunked), the limit bites while reading.
			req, _ := http.NewRequest(http.MethodPost, e.gateway+path, io.MultiReader(bytes.NewReader(big)))
			req.Header.Set("Authorization", "Bearer "+keys["gateway"])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("chunked %s: %v", path, err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || errorCode(t, raw) != "body_too_large" {
				t.Errorf("chunked %s over the limit: %d %s; want 413 body_too_large", path, resp.StatusCode, raw)
			}
		}
	})

	t.Run("a database that refuses connections is an outage everywhere", func(t *testing.T) {
		eventually(t, 30*time.Second, "a signed head", func() bool {
			code, _ := get(t, e.gateway+"/v1/log/head", nil)
			return code == http.StatusOK
		})
		code, body := get(t, e.gateway+"/v1/log/head", nil)
		var h signedHeadView
		if code != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Size < 2 {
			t.Fatalf("log head: %d %s", code, body)
		}
		requests := []struct {
			name, svc, method, path string
			body                    []byte
		}{
			{"gateway completion", "gateway", http.MethodPost, "/v1/chat/completions", chat},
			{"gateway Responses", "gateway", http.MethodPost, "/v1/responses", []byte(`{"input":"Say hello"}`)},
			{"gateway usage", "gateway", http.MethodGet, "/v1/usage", nil},
			{"log head", "gateway", http.MethodGet, "/v1/log/head", nil},
			{"log inclusion proof", "gateway", http.MethodGet, fmt.Sprintf("/v1/log/proof/inclusion?position=1&size=%d", h.Size), nil},
			{"log consistency proof", "gateway", http.MethodGet, fmt.Sprintf("/v1/log/proof/consistency?first=1&second=%d", h.Size), nil},
			{"records signals", "records", http.MethodGet, "/api/v1/signals/0001%20006", nil},
			{"records lists", "records", http.MethodGet, "/api/v1/lists", nil},
			{"answer", "answer", http.MethodGet, "/api/v1/answer?q=What+is+a+hash+chain", nil},
		}
		allow := refuseConnections(t, e.dbURL)
		// The first round may still find connections that were ended under
		// it; the second can only connect anew, and is refused.
		for _, round := range []string{"first", "second"} {
			for _, tc := range requests {
				r := send(t, tc.method, e.base(tc.svc)+tc.path, bearer(tc.svc), tc.body)
				ra, err := strconv.Atoi(r.header.Get("Retry-After"))
				if r.status != http.StatusServiceUnavailable || r.err.Code != "database_unavailable" || err != nil || ra < 1 || ra > 60 {
					t.Errorf("%s, %s round: %d %s, Retry-After %q; want 503 database_unavailable with Retry-After: %.300s",
						tc.name, round, r.status, r.err.Code, r.header.Get("Retry-After"), r.raw)
				}
			}
		}
		if !strings.Contains(p.logs.String(), "is not currently accepting connections") {
			t.Errorf("the log does not name the cause of the 503s:\n%s", p.logs.String())
		}
		allow()
		for _, tc := range requests {
			if tc.method != http.MethodGet || tc.svc == "answer" {
				continue // completions and answers cost upstream work; the reads show it
			}
			eventually(t, 30*time.Second, tc.name+" serves again", func() bool {
				return send(t, tc.method, e.base(tc.svc)+tc.path, bearer(tc.svc), tc.body).status < 500
			})
		}
	})
}
