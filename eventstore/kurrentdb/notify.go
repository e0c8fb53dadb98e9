package kurrentdb

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/eventstore"
)

// notifier keeps one live subscription to $all (system events filtered out
// on the server) and wakes waiters when an event arrives. It starts on first
// use, re-reads the head after every (re)subscription, and resubscribes with
// backoff when the subscription drops. Safe for concurrent use.
type notifier struct {
	conn *conn
	log  *slog.Logger

	watch *eventstore.HeadWatch

	mu      sync.Mutex
	started bool
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func newNotifier(c *conn, log *slog.Logger) *notifier {
	return &notifier{conn: c, log: log, watch: eventstore.NewHeadWatch()}
}

// start runs the subscription loop once; n.mu must be held.
func (n *notifier) start(head func(context.Context) (uint64, error)) {
	if n.started || n.stopped {
		return
	}
	n.started = true
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel, n.done = cancel, make(chan struct{})
	go n.run(ctx, head)
}

func (n *notifier) close() {
	n.mu.Lock()
	n.stopped = true
	started := n.started
	n.mu.Unlock()
	if started {
		n.cancel()
		<-n.done
	}
	n.watch.Close()
}

func (n *notifier) broadcast(head uint64) { n.watch.Announce(head) }

func (n *notifier) run(ctx context.Context, head func(context.Context) (uint64, error)) {
	defer close(n.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		subscribed, err := call(ctx, n.conn, func(c *esdb.Client) (bool, error) {
			sub, err := c.SubscribeToAll(ctx, esdb.SubscribeToAllOptions{From: esdb.End{}, Filter: esdb.ExcludeSystemEventsFilter()})
			if err != nil {
				return false, err
			}
			defer sub.Close()
			// Events committed while we were not subscribed were not delivered.
			if h, err := head(ctx); err == nil {
				n.broadcast(h)
			}
			return true, n.follow(sub)
		})
		switch {
		case ctx.Err() != nil || errors.Is(err, errClosed):
			return
		case !subscribed:
			n.log.Warn("kurrentdb event listener: subscribing to $all", "err", err)
			wait.Sleep(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
		default:
			n.log.Warn("kurrentdb event listener: subscription dropped", "err", err)
			backoff = 100 * time.Millisecond
		}
	}
}

// follow broadcasts the position of every event the subscription delivers
// until it drops, and returns why.
func (n *notifier) follow(sub *esdb.Subscription) error {
	for {
		ev := sub.Recv()
		switch {
		case ev.SubscriptionDropped != nil:
			return ev.SubscriptionDropped.Error
		case ev.EventAppeared != nil:
			if e := ev.EventAppeared.OriginalEvent(); e != nil && !isSystem(e.StreamID, e.EventType) {
				n.broadcast(e.Position.Commit)
			}
		}
	}
}

// wait returns once the head is past `after`, checking the server at start
// and every poll interval and waking on subscription events in between.
func (n *notifier) wait(ctx context.Context, after uint64, poll time.Duration, head func(context.Context) (uint64, error)) error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return errClosed
	}
	n.start(head)
	n.mu.Unlock()
	err := n.watch.Wait(ctx, after, poll, head, func(err error) { n.log.Warn("kurrentdb event listener: polling head", "err", err) })
	if errors.Is(err, eventstore.ErrClosed) {
		return errClosed
	}
	return err
}
