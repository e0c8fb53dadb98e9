package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// gw is an arr installation whose gateway routes every catalog model to a
// loopback upstream, with a key of an account on plan.
type gw struct {
	*env
	up   *upstreamtest.Server
	key  string
	proc *proc
}

func newGateway(t *testing.T, plan string, extraEnv ...string) *gw {
	t.Helper()
	e := newEnv(t)
	up := upstreamtest.Start(t)
	e.extraEnv = append(e.extraEnv, "ARR_UPSTREAM_BASE_URL="+up.URL, "ARR_UPSTREAM_API_KEY=sk-test-upstream",
		"ARR_UPSTREAM_TIMEOUT=2s", "ARR_UPSTREAM_BREAKER_FAILURES=3", "ARR_UPSTREAM_BREAKER_OPEN=1m")
	e.extraEnv = append(e.extraEnv, extraEnv...)
	p := e.up()
	e.createAccount("gw-"+plan+"@example.com", plan)
	k := e.mint("gw-"+plan+"@example.com", "gateway")
	return &gw{env: e, up: up, key: k.Secret, proc: p}
}

// owner is the header of the gateway's own key: GET /v1/audit/{hash}
// shows the payload of the account's entries only with it.
func (g *gw) owner() map[string]string {
	return map[string]string{"Authorization": "Bearer " + g.key}
}

// chat posts a chat completion and returns the status, headers and the
// decoded body.
func (g *gw) chat(t testing.TB, body any, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/chat/completions: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("chat: %d, not JSON: %q", resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, out
}

// sseEvent is one server-sent event.
type sseEvent struct {
	event string
	data  string
}

// chatStream posts a streamed chat completion and returns the response
// (body read) and its events.
func (g *gw) chatStream(t testing.TB, body any) (*http.Response, []sseEvent) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST stream: %v", err)
	}
	defer resp.Body.Close()
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.event != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			cur.data = strings.TrimSpace(line[5:])
		}
	}
	return resp, evs
}

func routingOf(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	r, ok := body["routing"].(map[string]any)
	if !ok {
		t.Fatalf("no routing object in %v", body)
	}
	return r
}

func errorOf(body map[string]any) (typ, code, param string) {
	e, _ := body["error"].(map[string]any)
	typ, _ = e["type"].(string)
	code, _ = e["code"].(string)
	param, _ = e["param"].(string)
	return
}

func userMsg(s string) []map[string]any {
	return []map[string]any{{"role": "user", "content": s}}
}

// eventually retries fn until it returns true, for at most d.
func eventually(t testing.TB, d time.Duration, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if fn() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s", what, d)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
