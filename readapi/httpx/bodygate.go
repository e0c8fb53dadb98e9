package httpx

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Request bodies in memory (Base.Bodies). Every route of a service reads
// its body through the engine's one body reader (limitBody), and that
// reader charges a BodyGate with the bytes it hands the handler, as they
// arrive, at most BodyChunk at a time: what a request is charged is what
// its handler can hold of its body, never what it declared. A body that
// arrives slowly, or not at all, is charged only the bytes that came (an
// idle sender nothing). The bytes stay charged until the request ends
// (a completion keeps its body, a stream for as long as it runs). The
// bound is per process (Max) and per account (PerAccount: every key of an
// account, and its sessions, share it, so minting keys does not multiply
// it; a request with no principal is charged to its client IP). A chunk
// that does not fit waits for room up to Wait; when a wait runs out the
// youngest waiting request of the full bound is refused (BodiesFull) and
// its bytes given back, so requests that hold part of a body never block
// each other for good: the oldest go on. A refused body is read to its
// end through a small buffer and dropped (the client then reads the
// refusal, not a reset connection).
//
// The memory bound: the bytes charged never exceed Max; each connection
// whose body bytes are arriving holds at most one chunk (BodyChunk,
// 32 KiB) more while it waits to be charged, and net/http's own buffers.
type BodyGate struct {
	max, perAccount int64
	wait            time.Duration

	mu       sync.Mutex
	used     int64
	accounts map[string]int64
	seq      uint64
	waiters  map[*bodyWaiter]struct{}
	// freed is closed (and replaced) whenever bytes are given back or a
	// waiter is refused.
	freed chan struct{}
}

// BodyChunk is the most a body read hands its handler before it is
// charged.
const BodyChunk = 32 << 10

// NewBodyGate returns a gate of max bytes per process, perAccount per
// account (at most max), waiting up to wait for room.
func NewBodyGate(limit, perAccount int64, wait time.Duration) *BodyGate {
	if limit <= 0 {
		limit = 64 << 20
	}
	if perAccount <= 0 || perAccount > limit {
		perAccount = min(16<<20, limit)
	}
	return &BodyGate{max: limit, perAccount: perAccount, wait: max(wait, 0),
		accounts: map[string]int64{}, waiters: map[*bodyWaiter]struct{}{}, freed: make(chan struct{})}
}

// BodiesFull is the refusal of a request whose body does not fit.
type BodiesFull struct {
	Account bool // the account's bytes, not the process's
	Limit   int64
	Retry   int
}

func (e *BodiesFull) Error() string {
	if e.Account {
		return fmt.Sprintf("this account has %d MiB of request bodies in flight in this process, its limit (ARR_GATEWAY_ACCOUNT_BODIES_MB); retry once some of its requests have ended", e.Limit>>20)
	}
	return fmt.Sprintf("the gateway has %d MiB of request bodies in flight, its limit (ARR_GATEWAY_BODIES_MB); retry shortly", e.Limit>>20)
}

// bodyCharge is what one request holds of a gate.
type bodyCharge struct {
	gate    *BodyGate
	account string
	seq     uint64
	held    int64
}

// bodyWaiter is a request waiting for room.
type bodyWaiter struct {
	c       *bodyCharge
	refused *BodiesFull
}

// charge opens a request's charge on account.
func (g *BodyGate) charge(account string) *bodyCharge {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	return &bodyCharge{gate: g, account: account, seq: g.seq}
}

// take charges n more bytes to r, waiting for room (see BodyGate).
func (r *bodyCharge) take(ctx context.Context, n int64) error {
	g := r.gate
	var w *bodyWaiter
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	defer func() {
		if w != nil {
			delete(g.waiters, w)
		}
	}()
	for {
		if w != nil && w.refused != nil {
			return w.refused
		}
		process, ofAccount := g.used+n <= g.max, g.accounts[r.account]+n <= g.perAccount
		if process && ofAccount {
			g.used += n
			g.accounts[r.account] += n
			r.held += n
			return nil
		}
		if w == nil {
			w = &bodyWaiter{c: r}
			g.waiters[w] = struct{}{}
		}
		freed := g.freed
		g.mu.Unlock()
		var expired bool
		select {
		case <-freed:
		case <-ctx.Done():
			g.mu.Lock()
			return ctx.Err()
		case <-timer.C:
			expired = true
		}
		g.mu.Lock()
		if expired && w.refused == nil {
			// Refuse the youngest waiter of the bound that is full (this
			// one, or a younger one whose bytes then make room).
			full := &BodiesFull{Limit: g.max, Retry: 1}
			if !ofAccount {
				full = &BodiesFull{Account: true, Limit: g.perAccount, Retry: 1}
			}
			var young *bodyWaiter
			for o := range g.waiters {
				if o.refused == nil && (!full.Account || o.c.account == r.account) && (young == nil || o.c.seq > young.c.seq) {
					young = o
				}
			}
			if young == nil || young == w {
				return full
			}
			young.refused = full
			g.wake()
			timer.Reset(g.wait)
		}
	}
}

// release gives back everything r holds.
func (r *bodyCharge) release() {
	g := r.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	r.giveLocked(r.held)
}

func (r *bodyCharge) giveLocked(n int64) {
	if n <= 0 {
		return
	}
	g := r.gate
	r.held -= n
	g.used -= n
	if g.accounts[r.account] -= n; g.accounts[r.account] <= 0 {
		delete(g.accounts, r.account)
	}
	g.wake()
}

// wake tells every waiter that something changed. g.mu is held.
func (g *BodyGate) wake() {
	close(g.freed)
	g.freed = make(chan struct{})
}

// Held is the bytes charged in the process (for tests and metrics).
func (g *BodyGate) Held() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used
}

// bodyAccount is whom c's body is charged to: its principal's account
// (a key's or a session's), else its client IP.
func bodyAccount(c *gin.Context) string {
	if p, ok := PrincipalOf(c); ok {
		return p.AccountID.String()
	}
	if s, ok := SessionOf(c); ok {
		return s.AccountID.String()
	}
	return "ip:" + c.ClientIP()
}
