package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/eventstore"
)

// notifier keeps one LISTEN connection and wakes waiters when the log's
// head moves. A notification is a wake-up only: any role that can connect
// may NOTIFY any channel with any payload, so the head is read from the
// database (one read at a time, however many notifications arrive
// meanwhile, at most one per minReadGap) and nothing is believed from a
// payload. It starts on first use and reconnects on failure.
type notifier struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	head func(context.Context) (uint64, error)

	watch *eventstore.HeadWatch
	// dirty holds a token while a notification has come that no read of
	// the head has followed yet.
	dirty chan struct{}

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// minReadGap spaces the head reads a stream of notifications causes: a
// flood of them costs at most one read per gap.
const minReadGap = time.Millisecond

func newNotifier(pool *pgxpool.Pool, log *slog.Logger, head func(context.Context) (uint64, error)) *notifier {
	return &notifier{pool: pool, log: log, head: head, watch: eventstore.NewHeadWatch(), dirty: make(chan struct{}, 1)}
}

func (n *notifier) start() {
	if n.started {
		return
	}
	n.started = true
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel, n.done = cancel, make(chan struct{})
	reading := make(chan struct{})
	go func() { defer close(reading); n.read(ctx) }()
	go func() { defer close(n.done); n.listen(ctx); <-reading }()
}

// poke asks read for a read of the head.
func (n *notifier) poke() {
	select {
	case n.dirty <- struct{}{}:
	default:
	}
}

// read reads the head from the database after each poke and announces it.
func (n *notifier) read(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.dirty:
		}
		h, err := n.head(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			n.log.Warn("event listener: reading the head after a notification (waiters poll meanwhile)", "err", err)
		default:
			n.watch.Announce(h)
		}
		wait.Sleep(ctx, minReadGap)
	}
}

func (n *notifier) close() {
	n.mu.Lock()
	started := n.started
	n.mu.Unlock()
	if started {
		n.cancel()
		<-n.done
	}
	n.watch.Close()
}

func (n *notifier) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := n.pool.Acquire(ctx)
		if err != nil {
			n.log.Warn("event listener: acquiring connection", "err", err)
			wait.Sleep(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
			conn.Release()
			n.log.Warn("event listener: LISTEN", "err", err)
			wait.Sleep(ctx, backoff)
			continue
		}
		backoff = 100 * time.Millisecond
		n.poke() // we may have missed commits while not listening
		for {
			if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
				break
			}
			n.poke()
		}
		// Connection state (LISTEN) must not go back to the pool.
		_ = conn.Conn().Close(context.Background())
		conn.Release()
	}
}

// wait returns once the head is past `after`, checking the database at start
// and every poll interval, and waking on notifications in between.
func (n *notifier) wait(ctx context.Context, after uint64, poll time.Duration, head func(context.Context) (uint64, error)) error {
	n.mu.Lock()
	n.start()
	n.mu.Unlock()
	return n.watch.Wait(ctx, after, poll, head, func(err error) { n.log.Warn("event listener: polling head", "err", err) })
}
