package projections

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/eventstore"
)

// Progress reports long work: done events out of total (total may grow while
// the log does).
type Progress func(done, total uint64)

// Rebuild rebuilds a read model from the whole log. See Replay.
func (r *Runner) Rebuild(ctx context.Context, name string, progress Progress) error {
	return r.Replay(ctx, name, 0, progress)
}

// Replay rebuilds a read model from the events after position `from` (0 for
// the whole log) into a shadow schema while the live read model keeps
// serving, then swaps the shadow in atomically: it locks the live
// checkpoint (pausing any runner of this projection), applies what arrived
// meanwhile, renames the schemas and sets the checkpoint, in one
// transaction. Readers see either the old read model or the new one, never a
// half-built one.
func (r *Runner) Replay(ctx context.Context, name string, from uint64, progress Progress) (err error) {
	p, err := r.get(name)
	if err != nil {
		return err // not wrapped: the projection is not found
	}
	defer domain.Wrap(&err, "replay %s", name)
	shadow := shadowSchema(name)
	started := time.Now()
	build := func() error {
		if p.BuildSchema != nil {
			return p.BuildSchema(ctx, shadow)
		}
		return r.inTx(ctx, p, func(tx pgx.Tx) error { return createSchema(ctx, tx, shadow, p, false) })
	}
	if err := build(); err != nil {
		return fmt.Errorf("creating shadow schema: %w", err)
	}
	head, err := r.store.Head(ctx)
	if err != nil {
		return err
	}
	total := head - min(from, head)
	pos, parked, err := r.loadShadow(ctx, p, from, &total, progress)
	if err != nil {
		return err
	}
	loaded := time.Now()
	if err := r.buildDeferredIndexes(ctx, p); err != nil {
		return fmt.Errorf("building indexes: %w", err)
	}
	indexed := time.Now()
	if err := r.swap(ctx, p, from, pos, parked); err != nil {
		return fmt.Errorf("swapping in the new read model: %w", err)
	}
	if progress != nil {
		progress(total, total)
	}
	r.cfg.Logger.Debug("replay phases", "projection", name, "load", loaded.Sub(started), "indexes", indexed.Sub(loaded),
		"swap", time.Since(indexed))
	r.dropRetired(ctx, name)
	return nil
}

// fetched is one batch of the log read ahead for a replay.
type fetched struct {
	events []eventstore.Event
	// decoded are the events decoded, nil if one does not decode (the
	// apply decodes them again and fails as it would have).
	decoded []Event
	upTo    uint64
	more    bool
	err     error
}

// loadShadow applies the log after from to p's shadow schema, batch by
// batch, up to what the log held when the last batch was read; it returns
// that position and the events the new read model goes without (parked
// at the swap). *total grows with the log, for progress.
//
// The next batch is read (and decoded) while the current one is applied:
// the log read and the apply then use both the database and this process
// at once. A projection that names its event types reads only those.
func (r *Runner) loadShadow(ctx context.Context, p *compiled, from uint64, total *uint64, progress Progress) (uint64, []ParkedEvent, error) {
	next := make(chan fetched, 1)
	fetch := func(after uint64) {
		go func() {
			rd, err := r.read(ctx, p, after, r.cfg.RebuildBatchSize)
			dec, derr := decode(r.reg, p, rd.events)
			if derr != nil {
				dec = nil
			}
			next <- fetched{rd.events, dec, rd.upTo, rd.more, err}
		}()
	}
	pos := from
	var parked []ParkedEvent
	fetch(pos)
	for {
		f := <-next
		if f.err != nil {
			return 0, nil, fmt.Errorf("reading after %d: %w", pos, f.err)
		}
		if f.more {
			fetch(f.upTo)
		}
		if len(f.events) > 0 {
			more, err := r.applyShadow(ctx, p, f)
			if err != nil {
				if f.more {
					<-next // let the prefetch finish before returning
				}
				return 0, nil, fmt.Errorf("applying %d..%d: %w", f.events[0].Position, f.events[len(f.events)-1].Position, err)
			}
			parked = append(parked, more...)
		}
		pos = max(pos, f.upTo)
		if progress != nil {
			*total = max(*total, pos-from)
			progress(pos-from, *total)
		}
		if !f.more {
			return pos, parked, nil // caught up with what was there; the swap takes the rest
		}
	}
}

// applyShadow applies one batch to p's shadow schema. If the batch fails
// in a way that parks, it is applied again event by event, and what fails
// is returned, to be parked when the new read model is swapped in.
func (r *Runner) applyShadow(ctx context.Context, p *compiled, f fetched) ([]ParkedEvent, error) {
	shadow := shadowSchema(p.Name)
	err := r.inTx(ctx, p, func(tx pgx.Tx) error {
		if err := setSearchPath(ctx, tx, shadow); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		if f.decoded != nil {
			return p.apply(ctx, tx, f.decoded)
		}
		return apply(ctx, tx, r.reg, p, f.events)
	})
	if err == nil || !parks(p, err) {
		return nil, err
	}
	var parked []ParkedEvent
	err = r.inTx(ctx, p, func(tx pgx.Tx) error {
		if err := setSearchPath(ctx, tx, shadow); err != nil {
			return err
		}
		var err error
		parked, err = applyIsolated(ctx, tx, r.reg, p, f.events)
		return err
	})
	return parked, err
}

// buildDeferredIndexes runs the DDL p defers until its shadow is loaded
// (index builds are faster over a full table than kept up row by row).
func (r *Runner) buildDeferredIndexes(ctx context.Context, p *compiled) error {
	ddl := p.DeferredDDL
	if ddl == "" {
		return nil
	}
	return r.inTx(ctx, p, func(tx pgx.Tx) error {
		if err := setSearchPath(ctx, tx, shadowSchema(p.Name)); err != nil {
			return err
		}
		// Index builds sort in memory when they can.
		if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, ddl)
		return err
	})
}

// catchUpShadow applies the log after *pos to p's shadow in tx, up to
// the head as tx sees it, and moves *pos there.
func (r *Runner) catchUpShadow(ctx context.Context, tx pgx.Tx, p *compiled, pos *uint64, parked *[]ParkedEvent) error {
	if err := setSearchPath(ctx, tx, shadowSchema(p.Name)); err != nil {
		return err
	}
	for more := true; more; {
		// The log is read on another connection while tx waits: kept from
		// idling meanwhile (KeepAlive), a read that outlasts BatchIdle
		// (a load's row chunks arriving during the rebuild) does not end
		// the swap; frozen, this process keeps it no more.
		stop := KeepAlive(ctx, tx)
		rd, err := r.read(ctx, p, *pos, r.cfg.BatchSize)
		if err := errors.Join(err, stop()); err != nil {
			return err
		}
		if len(rd.events) > 0 {
			if err := applyOrPark(ctx, tx, r.reg, p, rd.events, parked); err != nil {
				return err
			}
		}
		*pos, more = max(*pos, rd.upTo), rd.more
	}
	return nil
}

// install swaps p's shadow in as its live read model at pos, in tx (a
// transaction of the runner's that holds the checkpoint).
func (r *Runner) install(ctx context.Context, tx pgx.Tx, p *compiled, from, pos uint64, parked []ParkedEvent) error {
	name := p.Name
	if p.FailClosedChannel == "" {
		if err := replaceParked(ctx, tx, name, from, pos, parked); err != nil {
			return err
		}
		// tx is arr's own (the swap's), which may delete.
		if err := purgeCleared(ctx, tx, name); err != nil {
			return err
		}
	}
	// A retired schema whose drop was deferred (a reader held it) is
	// renamed aside, not dropped: a rename waits for no reader.
	aside, err := retiredAside(ctx, tx, name)
	if err != nil {
		return err
	}
	liveID, shadowID, retiredID := pgx.Identifier{Schema(name)}.Sanitize(), pgx.Identifier{shadowSchema(name)}.Sanitize(), pgx.Identifier{retiredSchema(name)}.Sanitize()
	stmts := aside
	stmts = append(stmts,
		`ALTER SCHEMA `+liveID+` RENAME TO `+retiredID,
		`ALTER SCHEMA `+shadowID+` RENAME TO `+liveID)
	if p.FailClosedChannel != "" { // processes caching the read model drop it
		stmts = append(stmts, `SELECT pg_notify(`+quoteLiteral(p.FailClosedChannel)+`, '')`)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	// Qualified: the shadow schema, on the search path, holds what
	// the projection's own SQL created.
	_, err = tx.Exec(ctx, `UPDATE public.projection_checkpoints SET position = $2, schema_hash = $3, updated_at = now() WHERE name = $1`, name, int64(pos), ddlHash(p))
	return err
}

// parks reports whether a rebuild of p that failed with err applies the
// batch again event by event, parking what fails: not for a projection
// that fails closed, nor for a failure that says nothing about the events.
func parks(p *compiled, err error) bool {
	return p.FailClosedChannel == "" && !Transient(err)
}

// applyOrPark applies events in tx; if that fails for the events' sake
// (parks), it applies them again one by one under savepoints and adds
// what fails to parked.
func applyOrPark(ctx context.Context, tx pgx.Tx, reg *domain.Registry, p *compiled, events []eventstore.Event, parked *[]ParkedEvent) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	err = apply(ctx, sp, reg, p, events)
	if err == nil {
		return sp.Commit(ctx)
	}
	if rbErr := sp.Rollback(ctx); rbErr != nil || !parks(p, err) {
		return errors.Join(err, rbErr)
	}
	more, err := applyIsolated(ctx, tx, reg, p, events)
	*parked = append(*parked, more...)
	return err
}

// inTx runs fn in a transaction of p's pool (see Spec.TxPool).
func (r *Runner) inTx(ctx context.Context, p *compiled, fn func(pgx.Tx) error) error {
	tx, err := r.txPool(p).BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// WaitFor returns once projection name has applied the log up to position
// pos (read-your-writes). If no runner has got there yet it applies the
// pending batches itself, so it does not depend on a runner process being
// alive. It gives up with ctx; callers bound ctx (a few seconds).
func (r *Runner) WaitFor(ctx context.Context, name string, pos uint64) error {
	if _, err := r.Get(name); err != nil {
		return err
	}
	for {
		var cur int64
		if err := r.pool.QueryRow(ctx, `SELECT position FROM projection_checkpoints WHERE name = $1`, name).Scan(&cur); err != nil {
			return fmt.Errorf("waiting for %s to reach %d: %w", name, pos, err)
		}
		if uint64(cur) >= pos {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting for %s to reach %d (at %d): %w", name, pos, cur, err)
		}
		if _, _, err := r.Step(ctx, name); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for %s to reach %d: %w", name, pos, ctx.Err())
			}
			wait.Sleep(ctx, 10*time.Millisecond) // busy (another runner is applying) or a transient failure
		}
	}
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
