package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// level is one measurement: one server at one concurrency for one round.
type level struct {
	Server          string  `json:"server"`
	Concurrency     int     `json:"concurrency"`
	Round           int     `json:"round"`
	Requests        int     `json:"requests"`
	RequestsPerSec  float64 `json:"requests_per_second"`
	P50ms           float64 `json:"p50_ms"`
	P99ms           float64 `json:"p99_ms"`
	FeaturesPerResp float64 `json:"mean_features_per_response"`
}

// clientFrom is worker w's HTTP client: one connection, from its own
// loopback address (127.0.1.x), like distinct public clients (arr's per-IP
// limiter counts them apart).
func clientFrom(w int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+w%250))}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}}
}

// measure runs conc clients against t for dur. Worker w draws its boxes
// from the seed w, so every server is asked the same boxes in the same
// order (as far as it gets in dur).
func measure(t target, conc int, dur time.Duration, boxDeg float64) (level, error) {
	var (
		mu       sync.Mutex
		lat      []time.Duration
		features atomic.Int64
		failures atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		failures.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	start := time.Now()
	deadline := start.Add(dur)
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			client := clientFrom(int(seed))
			defer client.CloseIdleConnections()
			r := rand.New(rand.NewPCG(seed, 7))
			var mine []time.Duration
			for time.Now().Before(deadline) {
				x, y := west+r.Float64()*(side-boxDeg), south+r.Float64()*(side-boxDeg)
				u := t.url(fmt.Sprintf("%.5f,%.5f,%.5f,%.5f", x, y, x+boxDeg, y+boxDeg))
				t0 := time.Now()
				resp, err := client.Get(u)
				if err != nil {
					fail(err)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t0))
				// The load generator shares the cores with the servers:
				// it reads the count from the body and decodes one
				// response in 50 in full.
				count, ok := t.count(body)
				if resp.StatusCode != 200 || !ok {
					fail(fmt.Errorf("%s: %d %.200s", t.name, resp.StatusCode, body))
					continue
				}
				if !t.binary && len(mine)%50 == 1 {
					var fc struct {
						Features []json.RawMessage `json:"features"`
					}
					if json.Unmarshal(body, &fc) != nil || len(fc.Features) != count {
						fail(fmt.Errorf("%s: count %d but %d features decoded", t.name, count, len(fc.Features)))
						continue
					}
				}
				features.Add(int64(count))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}(uint64(w))
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failures.Load(); f > 0 {
		return level{}, fmt.Errorf("%s at %d clients: %d bbox requests failed, first: %v", t.name, conc, f, firstErr.Load())
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	l := level{Server: t.name, Concurrency: conc, Requests: len(lat), RequestsPerSec: float64(len(lat)) / elapsed.Seconds(),
		P50ms: pct(0.50), P99ms: pct(0.99)}
	if len(lat) > 0 {
		l.FeaturesPerResp = float64(features.Load()) / float64(len(lat))
	}
	return l, nil
}

// median of the levels' figure f.
func median(ls []level, f func(level) float64) float64 {
	if len(ls) == 0 {
		return 0
	}
	v := make([]float64, len(ls))
	for i, l := range ls {
		v[i] = f(l)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// summary is the median of one server's rounds at one concurrency.
type summary struct {
	Server         string  `json:"server"`
	Concurrency    int     `json:"concurrency"`
	Rounds         int     `json:"rounds"`
	RequestsPerSec float64 `json:"median_requests_per_second"`
	P50ms          float64 `json:"median_p50_ms"`
	P99ms          float64 `json:"median_p99_ms"`
	Features       float64 `json:"median_features_per_response"`
}

func summarize(levels []level, server string, conc int) summary {
	var ls []level
	for _, l := range levels {
		if l.Server == server && l.Concurrency == conc {
			ls = append(ls, l)
		}
	}
	return summary{Server: server, Concurrency: conc, Rounds: len(ls),
		RequestsPerSec: median(ls, func(l level) float64 { return l.RequestsPerSec }),
		P50ms:          median(ls, func(l level) float64 { return l.P50ms }),
		P99ms:          median(ls, func(l level) float64 { return l.P99ms }),
		Features:       median(ls, func(l level) float64 { return l.FeaturesPerResp })}
}
