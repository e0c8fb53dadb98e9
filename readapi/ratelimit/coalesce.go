package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Ask is a request to count N requests of Bucket in Window under Limit.
type Ask struct {
	Bucket string
	Window Window
	Limit  int64
	N      int64
}

// Granted is the answer to an Ask: how many of its requests were admitted
// and the window's count after them.
type Granted struct {
	Admitted, Count int64
}

// BatchLimiter is a Limiter that can also count the requests of several
// buckets in one round trip.
type BatchLimiter interface {
	Limiter
	// TakeMany answers each ask as if it were alone: it admits
	// min(N, Limit-count) of the ask's requests, where count is what the
	// window had admitted before, atomically as Take does. An ask with a
	// Limit or N below 1 admits nothing. No two asks name the same bucket
	// and window. It returns one Granted per ask, in order.
	TakeMany(ctx context.Context, asks []Ask) ([]Granted, error)
}

// CoalesceConfig configures a Coalescing limiter.
type CoalesceConfig struct {
	// Timeout bounds one counting round trip, which runs on behalf of
	// every request in it whatever their own deadlines. Default 5s.
	Timeout time.Duration
	// MaxBuckets bounds how many buckets one round trip counts. Default 512.
	MaxBuckets int
}

// Coalescing is the group commit of quota counters: while a counting
// round trip is out, the requests that arrive queue, and the next round
// trip counts all of them, of every bucket, with one TakeMany. Each
// bucket's part of a round trip is one atomic step of the underlying
// limiter, so the limits stay exact across processes, and within a bucket
// requests are admitted in arrival order. Under load the counter store
// sees one round trip at a time per process instead of one per request;
// when idle a request costs one goroutine hand-off more than Take of the
// underlying limiter. Safe for concurrent use.
type Coalescing struct {
	l   BatchLimiter
	cfg CoalesceConfig

	mu      sync.Mutex
	pending map[queueKey]*group // what the next round trip counts
	running bool                // a goroutine is running rounds
}

// queueKey is a bucket's window under one limit: requests of one window
// under different limits (a plan changed) are counted in separate rounds.
type queueKey struct {
	bucket string
	start  int64
	limit  int64
}

type group struct {
	w       Window
	waiting []chan<- takeReply
}

type takeReply struct {
	res Result
	err error
}

// Coalesce wraps l so that concurrent Takes share round trips.
func Coalesce(l BatchLimiter, cfg CoalesceConfig) (*Coalescing, error) {
	if l == nil {
		return nil, errors.New("ratelimit: nil limiter")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.MaxBuckets == 0 {
		cfg.MaxBuckets = 512
	}
	if cfg.Timeout < 0 || cfg.MaxBuckets < 1 {
		return nil, errors.New("ratelimit: Timeout and MaxBuckets must be positive")
	}
	return &Coalescing{l: l, cfg: cfg, pending: make(map[queueKey]*group)}, nil
}

// Take implements Limiter. A request whose ctx ends while its round trip
// is out returns ctx's error; the round trip may still have counted it, as
// a request whose client goes away after an uncoalesced Take is counted.
func (c *Coalescing) Take(ctx context.Context, bucket string, w Window, limit int64) (Result, error) {
	if limit < 1 {
		return denied(w, limit), nil
	}
	ch := make(chan takeReply, 1)
	k := queueKey{bucket: bucket, start: w.Start.UnixNano(), limit: limit}
	c.mu.Lock()
	g := c.pending[k]
	if g == nil {
		g = &group{w: w}
		c.pending[k] = g
	}
	g.waiting = append(g.waiting, ch)
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		go c.rounds()
	}
	select {
	case r := <-ch:
		return r.res, r.err
	case <-ctx.Done():
		return Result{}, fmt.Errorf("counting %s: %w", bucket, ctx.Err())
	}
}

// Give implements Limiter: it gives the request back through the
// underlying limiter at once (refunds are not coalesced).
func (c *Coalescing) Give(ctx context.Context, bucket string, w Window) error {
	return c.l.Give(ctx, bucket, w)
}

// round is one round trip's share of the pending requests.
type round struct {
	keys   []queueKey
	groups []*group
}

// rounds runs round trips until nothing is pending.
func (c *Coalescing) rounds() {
	for {
		c.mu.Lock()
		r := c.next()
		if len(r.keys) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.count(r)
	}
}

// next takes the pending groups of at most MaxBuckets distinct windows out
// of pending, in bucket order. Called with c.mu held.
func (c *Coalescing) next() round {
	var r round
	for k := range c.pending {
		r.keys = append(r.keys, k)
	}
	sort.Slice(r.keys, func(i, j int) bool {
		a, b := r.keys[i], r.keys[j]
		if a.bucket != b.bucket {
			return a.bucket < b.bucket
		}
		if a.start != b.start {
			return a.start < b.start
		}
		return a.limit < b.limit
	})
	kept := r.keys[:0]
	for i, k := range r.keys {
		if len(kept) == c.cfg.MaxBuckets {
			break
		}
		if i > 0 && k.bucket == r.keys[i-1].bucket && k.start == r.keys[i-1].start {
			continue // the same window under another limit: next round
		}
		kept = append(kept, k)
		r.groups = append(r.groups, c.pending[k])
		delete(c.pending, k)
	}
	r.keys = kept
	return r
}

func (c *Coalescing) count(r round) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	if len(r.groups) == 1 && len(r.groups[0].waiting) == 1 {
		k, g := r.keys[0], r.groups[0]
		res, err := c.l.Take(ctx, k.bucket, g.w, k.limit)
		g.waiting[0] <- takeReply{res: res, err: err}
		return
	}
	asks := make([]Ask, len(r.keys))
	for i, k := range r.keys {
		asks[i] = Ask{Bucket: k.bucket, Window: r.groups[i].w, Limit: k.limit, N: int64(len(r.groups[i].waiting))}
	}
	got, err := c.l.TakeMany(ctx, asks)
	if err == nil && len(got) != len(asks) {
		err = fmt.Errorf("counting: %d answers to %d asks", len(got), len(asks))
	}
	for i, g := range r.groups {
		limit := r.keys[i].limit
		for j, ch := range g.waiting {
			switch {
			case err != nil:
				ch <- takeReply{err: err}
			case int64(j) < got[i].Admitted:
				before := got[i].Count - got[i].Admitted
				ch <- takeReply{res: admitted(g.w, limit, before+int64(j)+1)}
			default:
				ch <- takeReply{res: denied(g.w, limit)}
			}
		}
	}
}
