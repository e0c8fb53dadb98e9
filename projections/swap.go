package projections

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A rebuild's swap holds the projection's checkpoint row for as long as
// its transaction lasts, which pauses the live runners of the projection
// (for identity, which fails closed, every keyed request). So the swap is
// held as a batch is (lease.go): its transaction sets
// idle_in_transaction_session_timeout to BatchIdle before it takes the
// row, so a rebuild whose process freezes inside its swap has its session
// ended by the server within BatchIdle, freeing the row, and cannot
// commit when it wakes; and it takes the projection's batch lock, so a
// follower that finds the checkpoint held ends it (unstick) should that
// setting not hold. Its statements run under the batch timeout
// (statement_timeout) and, once it holds the row, under swapLockTimeout.
// A swap ended so rolls back whole: nothing is swapped in, the live read
// model serves on, and the rebuild can be run again (it builds its shadow
// anew).

// swapLockTimeout is the lock_timeout of a swap's statements once it
// holds the checkpoint row: no lock it then waits for (the batch lock of
// a batch that found the row taken and is rolling back, the parked rows
// of a retry) is held longer by a live holder; a frozen one loses it
// within LeaseTakeover.
const swapLockTimeout = LeaseTakeover

// swapSessionSQL sets up a swap's transaction before it takes the
// checkpoint: the server ends it when left idle for $1 ms, and cancels a
// statement that runs past $2 ms.
const swapSessionSQL = `SELECT pg_catalog.set_config('idle_in_transaction_session_timeout', $1, true), pg_catalog.set_config('statement_timeout', $2, true)`

// swapBatchLockSQL takes projection $1's batch lock, which names the
// transaction as the projection's batch (see batchLockSQL): once the swap
// holds the checkpoint row, no batch holds that lock for more than its
// rollback.
const swapBatchLockSQL = `SELECT pg_catalog.pg_advisory_xact_lock(hashtext('arr-projection-batch'), hashtext($1))`

// swap applies what arrived since the shadow was loaded (after pos) and
// swaps p's shadow in as its live read model, holding the checkpoint
// (see holdCheckpoint). pos and parked are what the shadow holds.
func (r *Runner) swap(ctx context.Context, p *compiled, from, pos uint64, parked []ParkedEvent) (err error) {
	defer func() { err = swapFailed(err) }()
	if p.TxPool == nil {
		return r.inTx(ctx, p, func(tx pgx.Tx) error {
			if err := r.holdCheckpoint(ctx, tx, p.Name, true); err != nil {
				return err
			}
			if err := r.catchUpShadow(ctx, tx, p, &pos, &parked); err != nil {
				return err
			}
			return r.install(ctx, tx, p, from, pos, parked)
		})
	}
	// The projection's sessions may not rename schemas nor write the
	// runner's tables: a transaction of the runner's holds the checkpoint
	// (pausing the live runners) around the projection's own, which
	// applies what arrived meanwhile to the shadow and commits, then
	// swaps. If it fails after that commit, the shadow is only further
	// along; the next rebuild makes it anew. The runner's transaction is
	// kept from idling while the projection's works (KeepAlive): frozen,
	// this process keeps it no more.
	return pgx.BeginFunc(ctx, r.pool, func(own pgx.Tx) error {
		if err := r.holdCheckpoint(ctx, own, p.Name, true); err != nil {
			return err
		}
		stop := KeepAlive(ctx, own)
		err := r.inTx(ctx, p, func(tx pgx.Tx) error { return r.catchUpShadow(ctx, tx, p, &pos, &parked) })
		if err := errors.Join(err, stop()); err != nil {
			return err
		}
		return r.install(ctx, own, p, from, pos, parked)
	})
}

// holdCheckpoint sets tx up as a swap's (swapSessionSQL), then holds
// name's checkpoint row until tx ends, which pauses the live runners of
// the projection, and, with batchLock, its batch lock (a session of a
// projection's SessionRole may not take it; unstick finds those by their
// role). A retry of parked events holds the checkpoint so too.
func (r *Runner) holdCheckpoint(ctx context.Context, tx pgx.Tx, name string, batchLock bool) error {
	if _, err := tx.Exec(ctx, swapSessionSQL, strconv.FormatInt(BatchIdle.Milliseconds(), 10),
		strconv.FormatInt(max(1, r.cfg.BatchTimeout.Milliseconds()), 10)); err != nil {
		return fmt.Errorf("setting the transaction's timeouts: %w", err)
	}
	var live int64
	if err := tx.QueryRow(ctx, `SELECT position FROM public.projection_checkpoints WHERE name = $1 FOR UPDATE`, name).Scan(&live); err != nil {
		return fmt.Errorf("locking checkpoint: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_catalog.set_config('lock_timeout', $1, true)`, strconv.FormatInt(swapLockTimeout.Milliseconds(), 10)); err != nil {
		return fmt.Errorf("setting the transaction's lock timeout: %w", err)
	}
	if !batchLock {
		return nil
	}
	if _, err := tx.Exec(ctx, swapBatchLockSQL, name); err != nil {
		return fmt.Errorf("taking the batch lock: %w", err)
	}
	return nil
}

// KeepAlive keeps tx from idling in its transaction while the caller
// works in another: it runs a statement in tx every BatchIdle/3 until the
// returned func is called, which waits for it to stop and returns its
// first failure. The caller does not use tx meanwhile. A transaction that
// holds a checkpoint and sets idle_in_transaction_session_timeout to
// BatchIdle (so that the server ends it if its process freezes) uses it
// while it waits on other sessions: a swap, a rebuild's log read,
// sqlproj's Drop.
func KeepAlive(ctx context.Context, tx pgx.Tx) (stop func() error) {
	done := make(chan struct{})
	failed := make(chan error, 1)
	go func() {
		t := time.NewTicker(BatchIdle / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				failed <- nil
				return
			case <-t.C:
				if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
					failed <- fmt.Errorf("keeping the transaction that holds the checkpoint: %w", err)
					return
				}
			}
		}
	}()
	return func() error {
		close(done)
		return <-failed
	}
}

// swapFailed says what a failed swap left: nothing swapped in. A swap
// whose session the server or a follower ended (its process frozen past
// BatchIdle) says so.
func swapFailed(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "25P03" || pgErr.Code == "57P01") {
		return fmt.Errorf("its transaction was ended, idle past %s (was this process stopped?); nothing was swapped in, the live read model serves on, and the rebuild may be run again: %w", BatchIdle, err)
	}
	return fmt.Errorf("nothing was swapped in (the live read model serves on): %w", err)
}
