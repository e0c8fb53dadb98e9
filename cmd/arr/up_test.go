package main_test

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestUpOnEmbeddedPostgres runs the README's first command the way a
// newcomer does: no DATABASE_URL. arr must start its own PostgreSQL under
// the data directory, say so, serve, and on SIGTERM drain and stop it.
func TestUpOnEmbeddedPostgres(t *testing.T) {
	dir := embeddedDataDir(t)
	pgPort := strings.Split(freeAddr(t), ":")[1]
	e := &env{t: t}
	a, g, r := freeAddr(t), freeAddr(t), freeAddr(t)
	e.answer, e.gateway, e.records = "http://"+a, "http://"+g, "http://"+r
	e.extraEnv = []string{"DATABASE_URL=", "ARR_DATA_DIR=" + dir, "ARR_EMBEDDED_PG_PORT=" + pgPort, "ARR_LOG_LEVEL=info",
		"ARR_ANSWER_ADDR=" + a, "ARR_GATEWAY_ADDR=" + g, "ARR_RECORDS_ADDR=" + r}
	p := e.start("up")
	for _, base := range []string{e.answer, e.gateway, e.records} {
		waitHealthy(t, base, p)
	}
	waitLog(t, p, "msg=ready")
	if logs := p.logs.String(); strings.Count(logs, "msg=ready") != 1 || strings.Contains(logs, "A first key") {
		t.Fatalf("with no terminal, arr up should log one ready line and print no ready message:\n%s", logs)
	}
	if !strings.Contains(p.logs.String(), "embedded PostgreSQL") {
		t.Fatalf("arr up did not say it uses the embedded PostgreSQL; logs:\n%s", p.logs.String())
	}
	if _, err := os.Stat(dir + "/pg/data/PG_VERSION"); err != nil {
		t.Fatalf("no cluster under the data directory: %v", err)
	}
	// The CLI finds the same embedded server.
	e.createAccount("embedded@example.com", "free")
	k := e.mint("embedded@example.com", "gateway")
	if code, body := get(t, e.gateway+"/v1/key", map[string]string{"Authorization": "Bearer " + k.Secret}); code != 200 {
		t.Fatalf("key minted on the embedded database: %d %s", code, body)
	}

	p.stop(t)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("arr up exited %d after SIGTERM; logs:\n%s", code, p.logs.String())
	}
	if !strings.Contains(p.logs.String(), "draining in-flight requests") || !strings.Contains(p.logs.String(), "msg=stopped") {
		t.Fatalf("no orderly shutdown in the logs:\n%s", p.logs.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+pgPort, 200*time.Millisecond)
		if err != nil {
			return // the embedded PostgreSQL arr started is stopped again
		}
		c.Close()
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the embedded PostgreSQL still listens on %s after arr up stopped", pgPort)
}

// waitLog waits up to a minute for arr's logs to hold s.
func waitLog(t *testing.T, p *proc, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.logs.String(), s) {
		select {
		case <-p.done:
			t.Fatalf("arr exited before it logged %q; logs:\n%s", s, p.logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("arr did not log %q within a minute; logs:\n%s", s, p.logs.String())
		}
	}
}
