package projections

import (
	"context"
	"fmt"
	"sync"
)

// following is a running Run: the context its projections follow, and
// how to stop one of them (Remove).
type following struct {
	ctx  context.Context
	wg   sync.WaitGroup
	stop map[string]context.CancelFunc // guarded by Runner.set
	mu   sync.Mutex
	errs []error
}

// followLocked starts following p; r.set is held.
func (r *Runner) followLocked(f *following, p *compiled) {
	ctx, cancel := context.WithCancel(f.ctx)
	f.stop[p.Name] = cancel
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := r.follow(ctx, p); err != nil {
			f.mu.Lock()
			f.errs = append(f.errs, fmt.Errorf("projection %s: %w", p.Name, err))
			f.mu.Unlock()
		}
	}()
}

// Add registers a projection after NewRunner: with setUp, it first sets it
// up as Setup does (schema, tables and checkpoint; a rebuild if its DDL
// changed); if Run is running, it follows it at once. Analysts' SQL
// projections come and go this way while arr runs. Safe for concurrent
// use.
func (r *Runner) Add(ctx context.Context, proj Projection, setUp bool) error {
	p, err := compile(proj.Spec())
	if err != nil {
		return err
	}
	name := p.Name
	r.set.Lock()
	if _, dup := r.byName[name]; dup {
		r.set.Unlock()
		return fmt.Errorf("projections: %q registered twice", name)
	}
	r.byName[name] = p
	r.order = append(r.order, p)
	r.set.Unlock()
	if setUp {
		if err := r.setUp(ctx, p); err != nil {
			r.forget(name)
			return err
		}
	}
	r.set.Lock()
	defer r.set.Unlock()
	if f := r.following; f != nil && r.byName[name] == p {
		r.followLocked(f, p)
	}
	return nil
}

// Remove stops following the projection named name (the batch in hand
// finishes) and forgets it. Its read model and checkpoint stay: dropping
// them is the caller's. It reports whether the runner had it.
func (r *Runner) Remove(name string) bool {
	if !r.forget(name) {
		return false
	}
	r.mu.Lock()
	delete(r.timeouts, name)
	delete(r.failures, name)
	r.mu.Unlock()
	return true
}

func (r *Runner) forget(name string) bool {
	r.set.Lock()
	defer r.set.Unlock()
	if _, ok := r.byName[name]; !ok {
		return false
	}
	delete(r.byName, name)
	// Under set, so that a batch finishing meanwhile cannot bring the
	// series back (metric).
	for _, v := range []interface{ DeleteLabelValues(...string) bool }{r.m.position, r.m.lag, r.m.events, r.m.batches, r.m.errors, r.m.parked, r.m.stopped} {
		v.DeleteLabelValues(name)
	}
	for i, p := range r.order {
		if p.Name == name {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	if f := r.following; f != nil {
		if stop, ok := f.stop[name]; ok {
			stop()
			delete(f.stop, name)
		}
	}
	return true
}
