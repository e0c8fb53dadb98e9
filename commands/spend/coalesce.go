package spend

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Coalescing, as the quotas' (readapi/ratelimit): while a reservation
// (or settle) round trip of a key is out, that key's next requests queue,
// and the next round trip reserves (or settles) all of them in one
// transaction. Each request of a round is decided on its own, in arrival
// order, exactly as it would have been alone after the requests before
// it: one that does not fit is refused for the limit it does not fit
// (budget_exceeded for a budget, rate_limit_exceeded only for rpm and
// tpm) and reserves nothing, so it never makes a later request that fits
// fail (a refused request is not queued, so there is nothing a later one
// could overtake). A key's limits stay exact; its counters see one
// transaction at a time per process instead of one per request.

// maxRound bounds the requests of one round.
const maxRound = 256

// coalescer runs jobs of one group key in rounds, one round trip at a
// time per key. Safe for concurrent use.
type coalescer[J any] struct {
	run func(ctx context.Context, jobs []J)
	// timeout bounds a round, which runs for every request in it
	// whatever their own deadlines.
	timeout time.Duration

	mu      sync.Mutex
	pending map[string][]J
	running map[string]bool
}

func newCoalescer[J any](timeout time.Duration, run func(ctx context.Context, jobs []J)) *coalescer[J] {
	return &coalescer[J]{run: run, timeout: timeout, pending: map[string][]J{}, running: map[string]bool{}}
}

// add queues j under key and starts the key's rounds if none runs.
func (c *coalescer[J]) add(key string, j J) {
	c.mu.Lock()
	c.pending[key] = append(c.pending[key], j)
	start := !c.running[key]
	c.running[key] = true
	c.mu.Unlock()
	if start {
		go c.rounds(key)
	}
}

// rounds runs the key's rounds until nothing of it is pending.
func (c *coalescer[J]) rounds(key string) {
	for {
		c.mu.Lock()
		jobs := c.pending[key]
		if len(jobs) == 0 {
			delete(c.pending, key)
			delete(c.running, key)
			c.mu.Unlock()
			return
		}
		if len(jobs) > maxRound {
			c.pending[key] = jobs[maxRound:]
			jobs = jobs[:maxRound:maxRound]
		} else {
			delete(c.pending, key)
		}
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		c.run(ctx, jobs)
		cancel()
	}
}

// groupKey names the counters and limits asks reserve in: requests of a
// key whose limits or windows differ go in different rounds.
func groupKey(asks []ask) string {
	var b strings.Builder
	for _, a := range asks {
		b.WriteString(a.bucket)
		b.WriteByte(0)
		b.WriteString(strconv.FormatInt(a.start.UnixNano(), 10))
		b.WriteByte(0)
		b.WriteString(strconv.FormatInt(a.limit, 10))
		b.WriteByte(0)
	}
	return b.String()
}

// reserveJob is one request's reservation in a round.
type reserveJob struct {
	id   uuid.UUID
	asks []ask
	// lease is how long the reservation is leased, from the database's
	// clock (now()), never a process's.
	lease time.Duration
	// quota is the request's plan count, counted with the reservation
	// (nil: the middleware counted it).
	quota PlanQuota
	reply chan reserveReply
}

type reserveReply struct {
	got []count
	ok  bool
	err error
	// refused is the plan quota's refusal: nothing was reserved.
	refused error
}

// settleJob is one request's settle in a round.
type settleJob struct {
	id    uuid.UUID
	asks  []ask // actual set
	reply chan settleReply
}

type settleReply struct {
	after []int64
	err   error
}
