package main_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// pgLink is a TCP relay on 127.0.0.1 between arr and the test's PostgreSQL,
// which the test can cut: every connection through it drops and new ones
// are refused (the port is closed), as in a database outage.
type pgLink struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

func newPGLink(t testing.TB, target string) *pgLink {
	t.Helper()
	l := &pgLink{t: t, target: target, conns: map[net.Conn]struct{}{}}
	l.listen("127.0.0.1:0")
	t.Cleanup(l.cut)
	return l
}

func (l *pgLink) listen(addr string) {
	l.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		l.t.Fatalf("relay to PostgreSQL: %v", err)
	}
	l.mu.Lock()
	l.ln, l.addr = ln, ln.Addr().String()
	l.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go l.relay(c)
		}
	}()
}

func (l *pgLink) relay(c net.Conn) {
	s, err := net.Dial("tcp", l.target)
	if err != nil {
		c.Close()
		return
	}
	l.mu.Lock()
	if l.ln == nil { // cut while dialing
		l.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	l.conns[c], l.conns[s] = struct{}{}, struct{}{}
	l.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	l.mu.Lock()
	delete(l.conns, c)
	delete(l.conns, s)
	l.mu.Unlock()
}

// cut closes the port and drops every connection through it.
func (l *pgLink) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
	for c := range l.conns {
		c.Close()
		delete(l.conns, c)
	}
}

// restore opens the port again.
func (l *pgLink) restore() { l.listen(l.addr) }

// TestDatabaseOutage: while PostgreSQL cannot be reached, every service
// answers 503 with Retry-After and its own JSON error body (code
// database_unavailable; the gateway's in the OpenAI shape) instead of
// 500 internal_error, and logs the cause; when the database is back, they
// serve again.
func TestDatabaseOutage(t *testing.T) {
	e := newEnv(t)
	direct, err := url.Parse(e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	link := newPGLink(t, direct.Host)
	relayed := *direct
	relayed.Host = link.addr
	e.dbURL = relayed.String()
	e.extraEnv = append(e.extraEnv, "REDIS_URL=", "ARR_ANSWER_SEED=off", "ARR_LOG_LEVEL=error", "ARR_UPSTREAM_BASE_URL="+upstreamtest.Start(t).URL)
	p := e.up()
	keys := map[string]mintedKey{}
	for _, svc := range []string{"answer", "gateway", "records"} {
		email := "outage-" + svc + "@example.com"
		e.createAccount(email, "free")
		keys[svc] = e.mint(email, svc)
	}
	requests := []struct {
		name, svc, method, path string
		body                    []byte
	}{
		{"answer key", "answer", http.MethodGet, "/api/v1/key", nil},
		{"gateway completion", "gateway", http.MethodPost, "/v1/chat/completions", []byte(`{"messages":[{"role":"user","content":"Say hello"}]}`)},
		{"gateway usage", "gateway", http.MethodGet, "/v1/usage", nil},
		{"records lists", "records", http.MethodGet, "/api/v1/lists", nil},
		{"records signals", "records", http.MethodGet, "/api/v1/signals/0001%20006", nil},
	}
	call := func(i int) reply {
		tc := requests[i]
		return send(t, tc.method, e.base(tc.svc)+tc.path, map[string]string{"Authorization": "Bearer " + keys[tc.svc].Secret}, tc.body)
	}
	for i, tc := range requests {
		if r := call(i); r.status >= 500 {
			t.Fatalf("%s before the outage: %d %s", tc.name, r.status, r.raw)
		}
	}

	link.cut()
	// The first round finds the pooled connections dropped under its
	// queries (unexpected EOF), the second finds the port closed
	// (connection refused).
	for _, round := range []string{"connections dropped", "connections refused"} {
		for i, tc := range requests {
			r := call(i)
			ra, err := strconv.Atoi(r.header.Get("Retry-After"))
			if r.status != http.StatusServiceUnavailable || r.err.Code != "database_unavailable" || err != nil || ra < 1 || ra > 60 {
				t.Errorf("%s, %s: %d %s, Retry-After %q; want 503 database_unavailable with Retry-After of a few seconds: %s",
					tc.name, round, r.status, r.err.Code, r.header.Get("Retry-After"), r.raw)
			}
			if tc.svc == "gateway" && r.err.Type != "service_unavailable_error" {
				t.Errorf("%s: error type %q, want the OpenAI shape with service_unavailable_error", tc.name, r.err.Type)
			}
		}
	}
	// Key-less records endpoints are counted per IP in PostgreSQL: with
	// the counters unreachable they are refused, with 503 and Retry-After
	// too.
	r := send(t, http.MethodGet, e.records+"/api/v1/parcels?bbox=-76.72,39.19,-76.52,39.38", nil, nil)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("public records with the database down: %d, Retry-After %q: %s", r.status, r.header.Get("Retry-After"), r.raw)
	}
	logged := regexp.MustCompile(`msg="http request" service=\w+ .*status=503 .*request_id=\S+ err="[^"]*(unexpected EOF|connection refused)`)
	if n := len(logged.FindAllString(p.logs.String(), -1)); n < 2*len(requests) {
		t.Errorf("%d of the %d 503s are logged with their cause and request id; logs:\n%s", n, 2*len(requests), p.logs.String())
	}

	link.restore()
	for i, tc := range requests {
		eventually(t, 30*time.Second, tc.name+" serves again after the outage", func() bool { return call(i).status < 500 })
	}
}
