package projections

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Leases make one runner at a time, of all the processes on a database,
// follow each projection: a runner follows a projection only while it
// holds the projection's PostgreSQL advisory lock, taken on a connection
// of its own (one for all its projections). When the process dies, its
// connection closes and the locks are free at once; when it is cut off
// the network, PostgreSQL drops the connection within LeaseDrop (the
// connection's TCP keep-alives and user timeout) and the process itself
// stops following as soon as a ping of the connection fails (within
// LeaseCheck plus its timeout). Another process's runner takes each free
// lock at its next check: a projection moves within LeaseDrop +
// LeaseCheck of its runner's loss.
//
// The leases keep the work in one place; they are not what makes it
// correct. Each batch is still applied in one transaction that locks the
// projection's checkpoint row and checks it did not move (Step), so even
// two runners that both believed they held a lease, or a read-your-writes
// WaitFor in a service process, apply every event exactly once.
type leases struct {
	// class is the locks' class: one per kind of lease.
	class  string
	what   string
	cfg    *pgx.ConnConfig
	log    *slog.Logger
	check  time.Duration
	names  func() []string
	mu     sync.Mutex
	held   map[string]bool
	notify chan struct{}
}

// The lease timing.
const (
	// LeaseCheck is how often a runner pings its lease connection and
	// tries to take the leases it does not hold.
	LeaseCheck = time.Second
	// LeaseDrop bounds how long PostgreSQL keeps the connection of a
	// runner cut off the network (so its locks): TCP keep-alives after 2
	// s idle, every 1 s, 3 lost; and 4 s for unacknowledged data.
	LeaseDrop = 5 * time.Second
	// leaseSettings give the lease connection's server side those bounds.
	leaseSettings = `SET tcp_keepalives_idle = 2; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 4000`
)

func newLeases(pool *pgxpool.Pool, log *slog.Logger, class, what string, names func() []string) *leases {
	cfg := pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	host, _ := os.Hostname()
	cfg.RuntimeParams["application_name"] = fmt.Sprintf("arr %s leases %s:%d", what, host, os.Getpid())
	return &leases{class: class, what: what, cfg: cfg, log: log, check: LeaseCheck, names: names, held: map[string]bool{}, notify: make(chan struct{})}
}

// holds reports whether this runner holds name's lease.
func (l *leases) holds(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[name]
}

// changed is closed at the next change of the leases held.
func (l *leases) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.notify
}

func (l *leases) set(held map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(held) == len(l.held) {
		same := true
		for n := range held {
			same = same && l.held[n]
		}
		if same {
			return
		}
	}
	l.held = held
	close(l.notify)
	l.notify = make(chan struct{})
}

// leaseSQL takes a lease's lock: class $1, name $2.
const leaseSQL = `SELECT pg_try_advisory_lock(hashtext($1), hashtext($2))`

// run keeps the leases until ctx ends: it connects, takes the free leases
// of the projections names returns, pings, and on any failure of the
// connection gives every lease up (stops following) and connects again.
func (l *leases) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := l.keep(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn(l.what+" leases lost; none is run here until they are taken again", "err", err)
		}
		l.set(map[string]bool{})
		sleep(ctx, l.check)
	}
}

func (l *leases) keep(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(cctx, l.cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = conn.Close(cctx) // closing the session frees its locks
	}()
	if _, err := conn.Exec(ctx, leaseSettings); err != nil {
		return fmt.Errorf("setting the connection's keep-alives: %w", err)
	}
	held := map[string]bool{}
	for {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := l.take(qctx, conn, held)
		cancel()
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(l.check):
		}
	}
}

// take pings the connection (a lease is only as good as it) and tries
// the leases not held.
func (l *leases) take(ctx context.Context, conn *pgx.Conn, held map[string]bool) error {
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	next := map[string]bool{}
	var took []string
	for _, n := range l.names() {
		if held[n] {
			next[n] = true
			continue
		}
		var ok bool
		if err := conn.QueryRow(ctx, leaseSQL, l.class, n).Scan(&ok); err != nil {
			return fmt.Errorf("taking the lease of %s: %w", n, err)
		}
		if ok {
			next[n], held[n] = true, true
			took = append(took, n)
		}
	}
	if len(took) > 0 {
		l.log.Info(l.what+" leases taken: run here", "names", took)
	}
	l.set(next)
	return nil
}

// Exclusive returns run wrapped so that, of all the processes on pool's
// database that run it under the same name, one at a time does: it runs
// while it holds name's lease (taken as a projection's is) and its
// context ends when the lease is lost; it starts again when the lease is
// taken again. The event log's head signer and the webhook dispatcher run
// so.
func Exclusive(pool *pgxpool.Pool, log *slog.Logger, name string, run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		l := newLeases(pool, log, "arr-exclusive", name, func() []string { return []string{name} })
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); l.run(ctx) }()
		defer wg.Wait()
		for ctx.Err() == nil {
			lost := l.changed() // (before holds: a loss after it closes this)
			if !l.holds(name) {
				select {
				case <-ctx.Done():
				case <-lost:
				}
				continue
			}
			rctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-lost:
				case <-rctx.Done():
				}
				cancel()
			}()
			err := run(rctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				log.Warn(name+" stopped; it runs again while this process holds its lease", "err", err)
				sleep(ctx, time.Second)
			}
		}
		return nil
	}
}
