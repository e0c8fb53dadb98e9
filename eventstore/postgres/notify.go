package postgres

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
)

// notifier keeps one LISTEN connection and wakes waiters when a commit
// announces a new head. It starts on first use and reconnects on failure.
type notifier struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	watch *eventstore.HeadWatch

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func newNotifier(pool *pgxpool.Pool, log *slog.Logger) *notifier {
	return &notifier{pool: pool, log: log, watch: eventstore.NewHeadWatch()}
}

func (n *notifier) start() {
	if n.started {
		return
	}
	n.started = true
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel, n.done = cancel, make(chan struct{})
	go n.listen(ctx)
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

func (n *notifier) broadcast(head uint64) { n.watch.Announce(head) }

func (n *notifier) listen(ctx context.Context) {
	defer close(n.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := n.pool.Acquire(ctx)
		if err != nil {
			n.log.Warn("event listener: acquiring connection", "err", err)
			sleep(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
			conn.Release()
			n.log.Warn("event listener: LISTEN", "err", err)
			sleep(ctx, backoff)
			continue
		}
		backoff = 100 * time.Millisecond
		n.broadcast(0) // we may have missed commits while not listening
		for {
			note, err := conn.Conn().WaitForNotification(ctx)
			if err != nil {
				break
			}
			h, _ := strconv.ParseUint(note.Payload, 10, 64)
			n.broadcast(h)
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

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
