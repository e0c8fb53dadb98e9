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

	"github.com/arr-dev/arr/domain/wait"
)

// Leases make one runner at a time, of all the processes on a database,
// follow each projection: a runner follows a projection only while it
// holds the projection's PostgreSQL advisory lock, taken on a connection
// of its own (one for all its projections), and renews it by pinging that
// connection every LeaseCheck.
//
// A lease has a deadline that PostgreSQL enforces, so a holder that stops
// making progress loses it whatever state its process is in:
//   - dead: its connection closes and the locks are free at once;
//   - frozen (SIGSTOP, a stalled VM): its TCP session lives on, but the
//     lease connection's idle_session_timeout (LeaseTTL) makes the server
//     end it LeaseTTL after the last ping, which frees the locks;
//   - cut off the network: TCP keep-alives and the user timeout drop the
//     connection within LeaseDrop.
//
// Another process's runner takes each free lock at its next check: a
// projection moves within LeaseTakeover of its holder's loss.
//
// Fencing: a holder that wakes after losing its lease cannot commit.
// Each batch transaction sets idle_in_transaction_session_timeout to
// BatchIdle in the round trip that begins it (beginBatch), shorter than the least time a frozen holder takes to lose
// its lease (LeaseTTL - LeaseCheck), so the server ends a frozen batch's
// session, with its checkpoint row lock, before the lease is free: the
// woken holder's COMMIT fails. A holder checks its own deadline before
// every commit too (holds), and the one that takes a lease ends any batch
// of the projection left idle in its transaction longer than BatchIdle
// (unstick), which no setting of the batch's session can prevent, and
// any left waiting for its client in the middle of a statement (a COPY:
// the server has no timeout for that), which it finds twice with no
// progress StuckSample apart. A
// rebuild's swap, which holds the checkpoint row too, is held as a batch
// is (swap.go). Beyond
// the leases, each batch still locks the projection's checkpoint row and
// checks it did not move (Step), so even two runners that both believed
// they held a lease, or a read-your-writes WaitFor in a service process,
// apply every event exactly once.
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
	// until is when the leases held expire unless renewed: LeaseValid
	// after the last ping sent that succeeded.
	until time.Time
}

// The lease timing.
const (
	// LeaseCheck is how often a runner pings its lease connection (renews
	// its leases) and tries to take the leases it does not hold.
	LeaseCheck = time.Second
	// LeaseTTL is how long PostgreSQL keeps a lease after its holder's
	// last renewal: the lease connection's idle_session_timeout. A holder
	// that stops renewing (frozen) is disconnected, its locks freed.
	LeaseTTL = 5 * time.Second
	// LeaseValid is how long a holder counts on its leases after a ping
	// it sent succeeded: the server's LeaseTTL starts after that ping
	// arrived, so the holder stops believing in a lease a LeaseCheck
	// before the server can free it.
	LeaseValid = LeaseTTL - LeaseCheck
	// BatchIdle is the idle_in_transaction_session_timeout of batch
	// transactions: a frozen holder's open batch is ended by the server
	// before its lease can be taken (BatchIdle < LeaseValid), so it
	// cannot commit when it wakes.
	BatchIdle = 3 * time.Second
	// LeaseDrop bounds how long PostgreSQL keeps the connection of a
	// runner cut off the network (so its locks): TCP keep-alives after 2
	// s idle, every 1 s, 3 lost; and 4 s for unacknowledged data.
	LeaseDrop = 5 * time.Second
	// LeaseTakeover bounds the time from a holder's freeze, death or loss
	// of the network to another process's holding its leases: the lease
	// ends within LeaseTTL (LeaseDrop) and a standby tries every
	// LeaseCheck, each try bounded by leaseQuery.
	LeaseTakeover = max(LeaseTTL, LeaseDrop) + LeaseCheck + leaseQuery
	// leaseQuery bounds one renewal (ping and tries).
	leaseQuery = 2 * time.Second
)

// leaseSettings give the lease connection's server side those bounds.
func leaseSettings() string {
	return fmt.Sprintf(`SET tcp_keepalives_idle = 2; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 4000; SET idle_session_timeout = %d`,
		LeaseTTL.Milliseconds())
}

func newLeases(pool *pgxpool.Pool, log *slog.Logger, class, what string, names func() []string) *leases {
	cfg := pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	host, _ := os.Hostname()
	cfg.RuntimeParams["application_name"] = fmt.Sprintf("arr %s leases %s:%d", what, host, os.Getpid())
	return &leases{class: class, what: what, cfg: cfg, log: log, check: LeaseCheck, names: names, held: map[string]bool{}, notify: make(chan struct{})}
}

// holds reports whether this runner holds name's lease: it took it and
// renewed it less than LeaseValid ago.
func (l *leases) holds(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[name] && time.Now().Before(l.until)
}

// expiry is when the leases held expire unless renewed.
func (l *leases) expiry() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// renewed extends the leases held to LeaseValid after sent.
func (l *leases) renewed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until = sent.Add(LeaseValid)
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
		wait.Sleep(ctx, l.check)
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
	if _, err := conn.Exec(ctx, leaseSettings()); err != nil {
		return fmt.Errorf("setting the connection's keep-alives and idle timeout: %w", err)
	}
	held := map[string]bool{}
	for {
		qctx, cancel := context.WithTimeout(ctx, leaseQuery)
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
	sent := time.Now()
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	l.renewed(sent)
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
// while it holds name's lease (taken as a projection's is, with the same
// deadline) and its context ends when the lease is lost or its deadline
// passes unrenewed (so a holder that wakes from a freeze stops at once);
// it starts again when the lease is taken again. The event log's head
// signer and the webhook dispatcher run so. What they write is fenced
// where it is written, not by the lease: the signer keeps a head per
// tree size once (a woken signer can only add a true head of a size not
// kept yet), the dispatcher appends each attempt at its stream's
// expected version.
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
				defer cancel()
				for {
					t := time.NewTimer(time.Until(l.expiry()))
					select {
					case <-lost:
					case <-rctx.Done():
					case <-t.C:
						if l.holds(name) {
							continue // renewed meanwhile
						}
					}
					t.Stop()
					return
				}
			}()
			err := run(rctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				log.Warn(name+" stopped; it runs again while this process holds its lease", "err", err)
				wait.Sleep(ctx, time.Second)
			}
		}
		return nil
	}
}
