package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
)

// Forwarder publishes every committed event, in log order and at least once,
// to a watermill publisher, checkpointing in PostgreSQL after each published
// batch. Its methods are safe for concurrent use, but Run refuses a second
// concurrent call; run one forwarder per name (two with the same name only
// duplicate messages, they never lose or reorder first deliveries).
type Forwarder struct {
	store   eventstore.Store
	pub     message.Publisher
	cp      checkpoint
	cfg     Config
	log     *slog.Logger
	m       *metrics
	running atomic.Bool
}

// NewForwarder returns a Forwarder that reads store, checkpoints in pool
// (migrated, with projection_checkpoints) and publishes to pub. It refuses
// nil dependencies and an invalid Config.
func NewForwarder(pool *pgxpool.Pool, store eventstore.Store, pub message.Publisher, cfg Config) (*Forwarder, error) {
	switch {
	case pool == nil:
		return nil, errors.New("fan-out forwarder: nil pool")
	case store == nil:
		return nil, errors.New("fan-out forwarder: nil store")
	case pub == nil:
		return nil, errors.New("fan-out forwarder: nil publisher")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("fan-out forwarder: %w", err)
	}
	cfg.defaults()
	m, err := newMetrics(cfg.Registerer, cfg.Name)
	if err != nil {
		return nil, fmt.Errorf("fan-out forwarder %s: %w", cfg.Name, err)
	}
	return &Forwarder{
		store: store, pub: pub, cfg: cfg, m: m,
		cp:  checkpoint{pool: pool, name: checkpointPrefix + cfg.Name},
		log: cfg.Logger.With("forwarder", cfg.Name, "topic", cfg.Topic),
	}, nil
}

// Run forwards from the checkpoint until ctx ends, waiting for new events
// when it has caught up. A failed read, publish or checkpoint write is
// retried with backoff and never skipped. When ctx ends, Run finishes the
// batch in hand (its publish call and checkpoint write) and returns nil; it
// returns an error only if it cannot start (checkpoint unreadable, already
// running) or cannot continue safely (checkpoint row deleted, event not
// encodable).
func (f *Forwarder) Run(ctx context.Context) error {
	if !f.running.CompareAndSwap(false, true) {
		return fmt.Errorf("fan-out forwarder %s: already running", f.cfg.Name)
	}
	defer f.running.Store(false)
	pos, err := f.cp.load(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("fan-out forwarder %s: %w", f.cfg.Name, err)
	}
	f.log.Info("fan-out forwarder starting", "position", pos)
	defer func() { f.log.Info("fan-out forwarder stopped", "position", pos) }()
	r := retrier{ctx: ctx, cfg: &f.cfg, log: f.log, errs: f.m.errs}
	for ctx.Err() == nil {
		evs, err := f.store.ReadAll(ctx, pos, f.cfg.BatchSize)
		if err != nil {
			if ctx.Err() == nil {
				r.failed("reading the log", err)
			}
			continue
		}
		r.reset()
		if len(evs) == 0 {
			f.m.lag.Set(0)
			if err := f.store.WaitForEvents(ctx, pos); err != nil && ctx.Err() == nil {
				r.failed("waiting for events", err)
			}
			continue
		}
		done, err := f.forward(ctx, &r, evs)
		if err != nil {
			return fmt.Errorf("fan-out forwarder %s: %w", f.cfg.Name, err)
		}
		if !done {
			break // shutting down; the batch is published again next time
		}
		pos = evs[len(evs)-1].Position
		f.updateLag(ctx, pos)
	}
	return nil
}

func (f *Forwarder) updateLag(ctx context.Context, pos uint64) {
	if f.cfg.Registerer == nil {
		return
	}
	// Detached so the last batch before shutdown still updates the gauge.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if head, err := f.store.Head(ctx); err == nil && head >= pos {
		f.m.lag.Set(float64(head - pos))
	}
}
