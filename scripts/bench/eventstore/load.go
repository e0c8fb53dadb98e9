package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// sample is one run of single-event appends.
type sample struct {
	EventsPerSec float64 `json:"events_per_sec"`
	Events       int     `json:"events"`
	P50ms        float64 `json:"p50_ms"`
	P99ms        float64 `json:"p99_ms"`
	calls        int     // all successful calls, warmup included
}

// drive runs `writers` goroutines that call write(ctx, writer, seq) in a
// loop for warmup+d, and counts the calls that complete inside the measured
// window (after warmup). A failed call ends the run with its error.
func drive(ctx context.Context, writers int, warmup, d time.Duration, write func(ctx context.Context, w, seq int) error) (sample, error) {
	start := time.Now()
	from, to := start.Add(warmup), start.Add(warmup+d)
	lat := make([][]time.Duration, writers)
	errs := make([]error, writers)
	ok := make([]int, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				t0 := time.Now()
				if !t0.Before(to) {
					return
				}
				if err := write(ctx, w, seq); err != nil {
					errs[w] = fmt.Errorf("writer %d: %w", w, err)
					return
				}
				ok[w]++
				t1 := time.Now()
				if !t1.Before(from) && t1.Before(to) {
					lat[w] = append(lat[w], t1.Sub(t0))
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return sample{}, err
		}
	}
	var all []time.Duration
	calls := 0
	for w, l := range lat {
		calls += ok[w]
		all = append(all, l...)
	}
	if len(all) == 0 {
		return sample{}, fmt.Errorf("no call completed in %s", d)
	}
	slices.Sort(all)
	return sample{
		EventsPerSec: float64(len(all)) / d.Seconds(),
		Events:       len(all),
		calls:        calls,
		P50ms:        ms(all[len(all)/2]),
		P99ms:        ms(all[min(len(all)-1, len(all)*99/100)]),
	}, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
