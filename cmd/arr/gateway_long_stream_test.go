package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestLongStreamKeepsItsReservation: a stream that runs past its
// reservation's lease (the services' clock moves two hours on, over the
// one-hour lease, while it runs) keeps its reservation: a gateway process
// started then sweeps expired leases and releases nothing of it, the
// requests that follow fill only what the stream left, and once it
// settles the key's budget is not exceeded (the documented overshoot is
// 0). A stream longer than ARR_GATEWAY_MAX_REQUEST_DURATION is cut there,
// ending with an error event max_request_duration_exceeded, and settles.
func TestLongStreamKeepsItsReservation(t *testing.T) {
	g := newLimitedGateway(t, "ARR_GATEWAY_MAX_REQUEST_DURATION=12s")
	const budget = 1.0
	k := g.mintLimited(t, "--max-budget-usd", "1", "--budget-period", "total")
	// claude-opus-4: $15 and $75 per million tokens. The long stream's
	// 40,000-character prompt reserves about $0.62 and costs about $0.15;
	// each filler reserves about $0.062 and costs about $0.015.
	g.up.Set("claude-opus-4-0", upstreamtest.Behavior{ChunkDelay: 400 * time.Millisecond})
	long := map[string]any{"model": "claude-opus-4", "stream": true, "max_tokens": 200,
		"stream_options": map[string]any{"include_usage": true},
		"messages":       userMsg(strings.Repeat("lighthouse ", 3636))}
	type streamed struct {
		status int
		last   string
		err    error
	}
	stream := func(key string, body map[string]any, first chan<- struct{}) streamed {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/chat/completions", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(first)
			return streamed{err: err}
		}
		defer resp.Body.Close()
		out := streamed{status: resp.StatusCode}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := false
		for sc.Scan() {
			if line := sc.Text(); line != "" {
				out.last = line
				if !once {
					once = true
					close(first)
				}
			}
		}
		if !once {
			close(first)
		}
		return out
	}
	longFirst, longDone := make(chan struct{}), make(chan streamed, 1)
	go func() { longDone <- stream(k.Secret, long, longFirst) }()
	// A stream of another key that would run about 33 s: cut at 12 s.
	g.up.Set("claude-sonnet-4-0", upstreamtest.Behavior{ChunkDelay: time.Second}) // under ARR_UPSTREAM_TIMEOUT (2s) between chunks
	capKey := g.mintLimited(t, "--max-budget-usd", "1", "--budget-period", "total")
	capFirst, capDone := make(chan struct{}), make(chan streamed, 1)
	capStart := time.Now()
	go func() {
		capDone <- stream(capKey.Secret, map[string]any{"model": "claude-sonnet-4", "stream": true, "max_tokens": 50,
			"messages": userMsg(strings.Repeat("a slow story ", 10))}, capFirst)
	}()
	<-longFirst
	if s := g.listed(t, k.ID).Spend; s == nil || s.ReservedUSD < 0.6 {
		t.Fatalf("the long stream's reservation: %+v", s)
	}

	// Two hours later (over the lease), a new gateway process sweeps.
	if err := os.WriteFile(g.clock, []byte("2h"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	third := "http://" + freeAddr(t)
	g.extraEnv = append(g.extraEnv, "ARR_GATEWAY_ADDR="+strings.TrimPrefix(third, "http://"))
	waitHealthy(t, third, g.start("serve", "gateway"))
	time.Sleep(500 * time.Millisecond)
	if s := g.listed(t, k.ID).Spend; s == nil || s.ReservedUSD < 0.6 {
		t.Errorf("after the sweep, the live stream's reservation is %+v; want it kept", s)
	}

	// Fillers until the budget refuses them, while the stream runs.
	filler := func(i int) map[string]any {
		return map[string]any{"model": "claude-opus-4", "max_tokens": 1, "messages": userMsg(fmt.Sprintf("%d %s", i, strings.Repeat("filler ", 570)))}
	}
	answered := 0
	for wave := 0; wave < 20; wave++ {
		as := g.burst(t, 8, k.Secret, func(i int) map[string]any { return filler(wave*8 + i) }, 0)
		ok := countStatus(as, 200, "")
		if ok+countStatus(as, 429, "budget_exceeded") != len(as) {
			t.Fatalf("fillers: %v", as)
		}
		answered += ok
		if ok == 0 {
			break
		}
	}
	select {
	case <-longDone:
		t.Fatal("the long stream ended before the fillers were refused: the test proves nothing")
	default:
	}
	res := <-longDone
	if res.err != nil || res.status != 200 || res.last != "data: [DONE]" {
		t.Fatalf("the long stream: %v %d, last line %q", res.err, res.status, res.last)
	}
	s := g.listed(t, k.ID).Spend
	t.Logf("%d fillers answered; $%.6f spent of a $%v budget, $%.6f reserved", answered, s.SpentUSD, budget, s.ReservedUSD)
	if s.SpentUSD > budget || s.ReservedUSD != 0 {
		t.Fatalf("the budget was overshot: $%.6f spent of $%v ($%.6f reserved)", s.SpentUSD, budget, s.ReservedUSD)
	}

	<-capFirst
	c := <-capDone
	took := time.Since(capStart)
	if c.err != nil || c.status != 200 || !strings.Contains(c.last, "max_request_duration_exceeded") || took > 30*time.Second {
		t.Fatalf("a stream longer than ARR_GATEWAY_MAX_REQUEST_DURATION: %v %d after %s, last line %q", c.err, c.status, took, c.last)
	}
	if s := g.listed(t, capKey.ID).Spend; s == nil || s.ReservedUSD != 0 || s.SpentUSD == 0 {
		t.Fatalf("the cut stream did not settle: %+v", s)
	}
}
