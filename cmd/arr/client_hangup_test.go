package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestClientHangUpIs499: a client that hangs up before its answer is
// logged as 499 (nginx's "client closed request"), at info level and not
// as a server error, is measured as 499 in arr_http_requests_total, and
// stays counted against the plan's daily window as the rate-limit
// contract says (work was started for it).
func TestClientHangUpIs499(t *testing.T) {
	g := newGateway(t, "free", "ARR_LOG_LEVEL=info")
	status, h, _ := g.chat(t, map[string]any{"model": "auto", "messages": userMsg("before the hang-up")})
	if status != 200 {
		t.Fatalf("first completion: %d", status)
	}
	before := h.Get("X-RateLimit-Remaining")

	g.up.Set("", upstreamtest.Behavior{Latency: 3 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	b, _ := json.Marshal(map[string]any{"model": "auto", "messages": userMsg("the client hangs up")})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.gateway+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+g.key)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		if resp != nil {
			resp.Body.Close()
		}
		t.Fatalf("the hung-up request was answered: %v", err)
	}
	cancel()
	line := regexp.MustCompile(`level=(\w+) msg="http request" service=gateway method=POST path=/v1/chat/completions status=(\d+)[^\n]*`)
	var got []string
	eventually(t, 10*time.Second, "the hung-up request's access-log line", func() bool {
		got = nil
		for _, m := range line.FindAllStringSubmatch(g.proc.logs.String(), -1) {
			got = append(got, m[0])
		}
		return len(got) >= 2
	})
	if m := line.FindStringSubmatch(got[1]); m[1] != "INFO" || m[2] != "499" || !strings.Contains(got[1], "client closed the request") {
		t.Errorf("the hang-up is logged as %q, want level INFO, status 499 and the client closing the request", got[1])
	}
	_, metrics := sendReq(t, "GET", g.gateway+"/metrics", nil, nil)
	if !regexp.MustCompile(`arr_http_requests_total\{method="POST",route="/v1/chat/completions",service="gateway",status="499"\} 1`).Match(metrics) {
		t.Errorf("no 499 in the metrics:\n%s", grepLines(string(metrics), "arr_http_requests_total"))
	}
	g.up.Set("", upstreamtest.Behavior{})
	status, h, _ = g.chat(t, map[string]any{"model": "auto", "messages": userMsg("after the hang-up")})
	if status != 200 {
		t.Fatalf("completion after the hang-up: %d", status)
	}
	if after := h.Get("X-RateLimit-Remaining"); !oneLess(before, after, 2) {
		t.Errorf("X-RateLimit-Remaining %s before, %s after the hang-up and one more request: the hang-up must stay counted", before, after)
	}
	if strings.Contains(g.proc.logs.String(), "level=ERROR") {
		t.Errorf("the hang-up logged an error:\n%s", grepLines(g.proc.logs.String(), "level=ERROR"))
	}
}

// oneLess reports whether after is n less than before (decimal strings).
func oneLess(before, after string, n int) bool {
	b, err1 := strconv.Atoi(before)
	a, err2 := strconv.Atoi(after)
	return err1 == nil && err2 == nil && b-a == n
}
