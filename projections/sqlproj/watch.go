package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/arr-dev/arr/projections"
)

// Sync makes r's SQL projections those in force: each defined one r lacks
// is parsed and added (with setUp, set up too: its role, schema and
// checkpoint, rebuilt if its definition changed; a process that runs r
// also skips one another process is Building); each one r has that is no
// longer defined is removed from r. It returns the names removed and every
// failure (a definition this build cannot parse, a setup that failed);
// the others are synced all the same.
func (e *Engine) Sync(ctx context.Context, r *projections.Runner, setUp bool) (removed []string, err error) {
	return e.sync(ctx, r, setUp, false)
}

func (e *Engine) sync(ctx context.Context, r *projections.Runner, setUp, skipBuilding bool) (removed []string, err error) {
	defined, err := e.Defined(ctx)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{} // the runner's SQL projections
	for _, p := range r.Projections() {
		if IsSQL(p) {
			have[p.Name] = true
		}
	}
	var errs []error
	want := map[string]bool{}
	for _, s := range defined {
		want[s.Name] = true
		if _, ok := have[s.Name]; ok {
			continue
		}
		if skipBuilding {
			if b, err := e.building(ctx, s.Name); err != nil || b {
				errs = append(errs, err)
				continue
			}
		}
		d, err := e.Parse(s.Name+".sql", s.SQL)
		if err != nil {
			errs = append(errs, fmt.Errorf("SQL projection %s (defined by %s at %s) does not parse in this build: %w", s.Name, s.DefinedBy, s.DefinedAt.Format(time.RFC3339), err))
			continue
		}
		if err := r.Add(ctx, e.Projection(d), setUp); err != nil {
			errs = append(errs, fmt.Errorf("SQL projection %s: %w", s.Name, err))
		}
	}
	for name := range have {
		if !want[name] && r.Remove(name) {
			removed = append(removed, name)
		}
	}
	return removed, errors.Join(errs...)
}

// Watch keeps r's SQL projections those in force until ctx ends, looking
// every `every` (default 1s): a projection defined while arr runs is set
// up and followed, a dropped one stops and what it left is dropped. It
// logs what fails and tries again on the next look.
func (e *Engine) Watch(ctx context.Context, r *projections.Runner, every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	failed := map[string]bool{} // errors logged once until they change
	for {
		removed, err := e.sync(ctx, r, true, true)
		if err != nil && ctx.Err() == nil && !failed[err.Error()] {
			failed = map[string]bool{err.Error(): true}
			e.cfg.Logger.Error("SQL projections: could not follow every definition", "err", err)
		} else if err == nil {
			failed = map[string]bool{}
		}
		for _, name := range removed {
			e.cfg.Logger.Info("SQL projection dropped: no longer followed", "projection", name)
			if _, err := e.Drop(ctx, name); err != nil && ctx.Err() == nil {
				e.cfg.Logger.Warn("dropping what a SQL projection left", "projection", name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// buildLockKey is the first key of the session advisory lock Building
// holds.
const buildLockKey = 0x61727262 // "arrb"

// Building marks projection name as being built by this process (arr
// projections create) until release is called or the process's connection
// ends: runner processes leave it alone meanwhile (Watch does not follow
// it), rather than apply in small batches what the build is applying in
// big ones.
func (e *Engine) Building(ctx context.Context, name string) (release func(), err error) {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	g := e.guard(name)
	_, k2 := g.lockKeys()
	if _, err := conn.Exec(ctx, `SELECT pg_catalog.pg_advisory_lock($1, $2)`, int32(buildLockKey), k2); err != nil {
		conn.Release()
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, `SELECT pg_catalog.pg_advisory_unlock($1, $2)`, int32(buildLockKey), k2); err != nil {
			conn.Conn().Close(ctx) //nolint:errcheck // the lock ends with the session
		}
		conn.Release()
	}, nil
}

// building reports whether another process is building name (Building).
func (e *Engine) building(ctx context.Context, name string) (bool, error) {
	_, k2 := e.guard(name).lockKeys()
	var free bool
	err := e.pool.QueryRow(ctx, `SELECT pg_catalog.pg_try_advisory_xact_lock_shared($1, $2)`, int32(buildLockKey), k2).Scan(&free)
	return !free, err
}
