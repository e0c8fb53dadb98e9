package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}

// completion sends one chat completion with key to base; it returns the
// status (0: no answer) and the audit hash of a 200.
func completion(ctx context.Context, base, key string) (int, string) {
	return completionOf(ctx, base, key, helloBody)
}

// helloBody is the load's completion; shortBody caps its answer at 16
// tokens, so a budget reserves little for it.
var (
	helloBody = []byte(`{"model":"auto","messages":[{"role":"user","content":"Say hello"}]}`)
	shortBody = []byte(`{"model":"auto","max_tokens":16,"messages":[{"role":"user","content":"Say hello"}]}`)
)

// lastRefusal keeps the body of the last non-200 answer, for reports.
var lastRefusal atomic.Value

func completionOf(ctx context.Context, base, key string, body []byte) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, ""
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var out struct {
		Routing struct {
			AuditHash string `json:"audit_hash"`
		} `json:"routing"`
	}
	if resp.StatusCode == http.StatusOK {
		_ = json.Unmarshal(raw, &out)
	} else {
		lastRefusal.Store(string(raw))
	}
	return resp.StatusCode, out.Routing.AuditHash
}

// loadResult is what a load run saw.
type loadResult struct {
	ok, failed int64
	hashes     []string
	// okAt are the times of the 200s, for the longest gap.
	okAt    []time.Time
	elapsed time.Duration
}

func (l loadResult) rate() float64 { return float64(l.ok) / l.elapsed.Seconds() }

// gap is the longest time between two consecutive 200s after from.
func (l loadResult) gap(from time.Time) time.Duration {
	ts := append([]time.Time(nil), l.okAt...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var longest time.Duration
	prev := from
	for _, t := range ts {
		if t.Before(from) {
			continue
		}
		longest = max(longest, t.Sub(prev))
		prev = t
	}
	return longest
}

// load runs clients workers for d, each sending completions to the bases
// in turn; a request that gets no answer is sent again to the next base.
func load(ctx context.Context, bases []string, key string, clients int, d time.Duration) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := w
			for ctx.Err() == nil {
				status, hash := completion(ctx, bases[i%len(bases)], key)
				i++
				if ctx.Err() != nil {
					return
				}
				if status != http.StatusOK {
					failed.Add(1)
					continue
				}
				ok.Add(1)
				mu.Lock()
				res.hashes = append(res.hashes, hash)
				res.okAt = append(res.okAt, time.Now())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.ok, res.failed, res.elapsed = ok.Load(), failed.Load(), time.Since(start)
	return res
}

// burst sends n concurrent completions with key across bases and counts
// the statuses.
func burst(ctx context.Context, bases []string, key string, n int, body []byte) map[int]int {
	var mu sync.Mutex
	out := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _ := completionOf(ctx, bases[i%len(bases)], key, body)
			mu.Lock()
			out[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func waitHealthy(base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy after %s", base, limit)
}

func urls(hs []Host) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.URL
	}
	return out
}
