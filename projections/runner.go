package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/eventstore"
)

// Config configures a Runner.
type Config struct {
	// BatchSize is the most events applied per transaction. Default 2000.
	BatchSize int
	// RebuildBatchSize is the batch size of rebuilds and replays, which
	// run into shadow tables and profit from bigger batches. Default 20000.
	RebuildBatchSize int
	// BatchTimeout bounds one batch transaction. Default 60s. A batch that
	// runs out of time is rolled back and retried with twice the time of
	// its last try (up to MaxBatchTimeout), so work that is slow but
	// sound (publishing a load of millions of rows on a busy machine)
	// still gets through while a stuck batch is still cut short.
	BatchTimeout time.Duration
	// MaxBatchTimeout caps the doubling. Default 1h.
	MaxBatchTimeout time.Duration
	Logger          *slog.Logger
	// Registerer receives the runner's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// ParkAfter is how many tries a failing batch gets before the next
	// try applies it event by event and parks the events that fail (see
	// park.go). Default 3.
	ParkAfter int
	// Linger is how long a projection that has caught up waits after new
	// events arrive before applying them, so events arriving one by one
	// are applied in batches. Default 20ms; negative: none.
	Linger time.Duration
	// MinInterval is the least time from one catch-up of a projection to
	// the next: under a steady trickle of events (a gateway's completions
	// at one client) each projection then wakes, reads and commits at
	// most once per MinInterval, not once per Linger, which keeps that
	// background work from eating the cores the requests need. Events
	// after a quiet spell are applied after Linger as before, and
	// read-your-writes does not wait for either (WaitFor applies pending
	// batches itself). Default 100ms; negative: none.
	MinInterval time.Duration
}

// Validate fills in the defaults of the settings left zero and reports
// every setting that is out of range at once.
func (c *Config) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{{"BatchSize", int64(c.BatchSize)}, {"RebuildBatchSize", int64(c.RebuildBatchSize)}, {"ParkAfter", int64(c.ParkAfter)},
		{"BatchTimeout", int64(c.BatchTimeout)}, {"MaxBatchTimeout", int64(c.MaxBatchTimeout)}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("projections: %s is negative (%d); leave it zero for the default", f.name, f.v))
		}
	}
	if c.BatchSize == 0 {
		c.BatchSize = 2000
	}
	if c.RebuildBatchSize == 0 {
		c.RebuildBatchSize = 20000
	}
	if c.BatchTimeout == 0 {
		c.BatchTimeout = 60 * time.Second
	}
	if c.ParkAfter == 0 {
		c.ParkAfter = 3
	}
	if c.Linger == 0 {
		c.Linger = 20 * time.Millisecond
	}
	if c.MinInterval == 0 {
		c.MinInterval = 100 * time.Millisecond
	}
	if c.MaxBatchTimeout == 0 {
		c.MaxBatchTimeout = max(time.Hour, c.BatchTimeout)
	}
	if c.MaxBatchTimeout > 0 && c.BatchTimeout > 0 && c.MaxBatchTimeout < c.BatchTimeout {
		errs = append(errs, fmt.Errorf("projections: MaxBatchTimeout (%s) is below BatchTimeout (%s)", c.MaxBatchTimeout, c.BatchTimeout))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return errors.Join(errs...)
}

// Runner keeps a set of projections up to date. Safe for concurrent use;
// several runners (in several processes) may run the same projections on one
// database: the checkpoint row lock makes each batch apply exactly once.
type Runner struct {
	pool  *pgxpool.Pool
	store LogReader
	cfg   Config
	// set guards byName, order and following: Add and Remove change the
	// projections while the runner runs (dynamic.go).
	set       sync.RWMutex
	byName    map[string]*compiled
	order     []*compiled
	following *following
	// leases are the projections this runner may follow (lease.go); set
	// by Run.
	leases *leases
	m      *metrics
	// reg decodes every event a projection reads (domain/catalog).
	reg *domain.Registry

	mu sync.Mutex
	// timeouts holds, per projection, the timeout of the next try after a
	// batch ran out of time (absent: BatchTimeout).
	timeouts map[string]time.Duration
	// readLimits holds, per projection whose last batch Cut cut short,
	// how many events its next read asks for (absent: BatchSize).
	readLimits map[string]int
	// failures counts, per projection, failed tries at one checkpoint.
	failures map[string]failure
	// head is the log head the lag metrics were last computed from, read
	// at most every headEvery.
	head   uint64
	headAt time.Time
}

// headEvery is how stale the log head behind the lag metrics may be.
const headEvery = 250 * time.Millisecond

// NewRunner returns a runner for the projections; it changes nothing until
// Setup or Run.
func NewRunner(pool *pgxpool.Pool, store LogReader, cfg Config, ps ...Projection) (*Runner, error) {
	if pool == nil || store == nil {
		return nil, errors.New("projections: nil pool or store")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Runner{pool: pool, store: store, cfg: cfg, byName: map[string]*compiled{}, m: newMetrics(cfg.Registerer, pool), reg: catalog.Registry().WithUnmarshal(unmarshalV1),
		timeouts: map[string]time.Duration{}, readLimits: map[string]int{}, failures: map[string]failure{}}
	for _, p := range ps {
		c, err := compile(p.Spec())
		if err != nil {
			return nil, err
		}
		if _, dup := r.byName[c.Name]; dup {
			return nil, fmt.Errorf("projections: %q registered twice", c.Name)
		}
		r.byName[c.Name] = c
		r.order = append(r.order, c)
	}
	return r, nil
}

// Projections returns the specs of the registered projections in
// registration order.
func (r *Runner) Projections() []Spec {
	r.set.RLock()
	defer r.set.RUnlock()
	out := make([]Spec, len(r.order))
	for i, p := range r.order {
		out[i] = p.Spec
	}
	return out
}

// Get returns the spec of a projection by name.
func (r *Runner) Get(name string) (Spec, error) {
	p, err := r.get(name)
	if err != nil {
		return Spec{}, err
	}
	return p.Spec, nil
}

func (r *Runner) get(name string) (*compiled, error) {
	r.set.RLock()
	p, ok := r.byName[name]
	r.set.RUnlock()
	if !ok {
		return nil, domain.NotFound("projection_not_found", "no projection named %q (there are %s)", name, strings.Join(r.names(), ", "))
	}
	return p, nil
}

func (r *Runner) names() []string {
	r.set.RLock()
	defer r.set.RUnlock()
	out := make([]string, len(r.order))
	for i, p := range r.order {
		out[i] = p.Name
	}
	return out
}

// Setup makes sure every projection has its schema, tables and checkpoint.
// A projection whose DDL changed since its tables were built is rebuilt from
// the log (into a shadow schema, then swapped in).
func (r *Runner) Setup(ctx context.Context) error {
	r.set.RLock()
	ps := append([]*compiled(nil), r.order...)
	r.set.RUnlock()
	for _, p := range ps {
		if err := r.setUp(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// setUp sets p up (see Setup).
func (r *Runner) setUp(ctx context.Context, p *compiled) error {
	stale, err := r.setupOne(ctx, p)
	if err != nil {
		return err
	}
	if stale {
		r.cfg.Logger.Info("read model DDL changed: rebuilding from the log", "projection", p.Name)
		if err := r.Replay(ctx, p.Name, 0, nil); err != nil {
			return fmt.Errorf("rebuilding %s after a DDL change: %w", p.Name, err)
		}
		return nil // the replay dropped what earlier ones left
	}
	r.dropRetired(ctx, p.Name) // what a replay left while a reader held it
	return nil
}

func (r *Runner) setupOne(ctx context.Context, p *compiled) (stale bool, err error) {
	defer domain.Wrap(&err, "setting up %s", p.Name)
	if p.BuildSchema != nil {
		return r.setupBuilt(ctx, p)
	}
	tx, err := r.txPool(p).BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	// One process sets a projection up at a time.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('arr-projection-setup'), hashtext($1))`, p.Name); err != nil {
		return false, err
	}
	var hash string
	err = tx.QueryRow(ctx, `SELECT schema_hash FROM public.projection_checkpoints WHERE name = $1`, p.Name).Scan(&hash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if err := createSchema(ctx, tx, Schema(p.Name), p, true); err != nil {
			return false, err
		}
		// Qualified, like every statement that may follow a projection's
		// own SQL in a transaction (its schema is on the search path).
		if _, err := tx.Exec(ctx, `INSERT INTO public.projection_checkpoints (name, position, schema_hash) VALUES ($1, 0, $2)`, p.Name, ddlHash(p)); err != nil {
			return false, err
		}
		return false, tx.Commit(ctx)
	case err != nil:
		return false, err
	}
	return hash != ddlHash(p), tx.Commit(ctx)
}

// setupBuilt is setupOne (which wraps its errors) of a projection that
// builds its schema itself (in transactions of its own, which commit):
// the setup lock is held by a session of the runner's meanwhile, and the
// checkpoint is written once the schema is built (a crash before leaves
// a schema without a checkpoint, which the next setup builds again).
func (r *Runner) setupBuilt(ctx context.Context, p *compiled) (stale bool, err error) {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('arr-projection-setup'), hashtext($1))`, p.Name); err != nil {
		return false, err
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock(hashtext('arr-projection-setup'), hashtext($1))`, p.Name); err != nil {
			_ = conn.Conn().Close(uctx) // the lock ends with the session
		}
	}()
	var hash string
	err = conn.QueryRow(ctx, `SELECT schema_hash FROM public.projection_checkpoints WHERE name = $1`, p.Name).Scan(&hash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if err := p.BuildSchema(ctx, Schema(p.Name)); err != nil {
			return false, err
		}
		_, err := conn.Exec(ctx, `INSERT INTO public.projection_checkpoints (name, position, schema_hash) VALUES ($1, 0, $2)`, p.Name, ddlHash(p))
		return false, err
	case err != nil:
		return false, err
	}
	return hash != ddlHash(p), nil
}

func createSchema(ctx context.Context, tx pgx.Tx, schema string, p *compiled, withIndexes bool) error {
	id := pgx.Identifier{schema}.Sanitize()
	if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+id+` CASCADE`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+id); err != nil {
		return err
	}
	if err := setSearchPath(ctx, tx, schema); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, p.DDL); err != nil {
		return fmt.Errorf("creating tables of %s: %w", p.Name, err)
	}
	if ddl := p.DeferredDDL; withIndexes && ddl != "" {
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("creating indexes of %s: %w", p.Name, err)
		}
	}
	return nil
}

// Run keeps every projection up to date until ctx ends, and those Add
// registers meanwhile, and drops the retired read models a reader held
// at their rebuild's end once it is gone (dropRetiredLater). When it
// ends, each projection finishes the batch in hand and Run returns nil.
func (r *Runner) Run(ctx context.Context) error {
	f := &following{ctx: ctx, stop: map[string]context.CancelFunc{}}
	r.set.Lock()
	if r.following != nil {
		r.set.Unlock()
		return errors.New("projections: Run is already running")
	}
	r.following = f
	r.leases = newLeases(r.pool, r.cfg.Logger, "arr-projection-lease", "projection", r.names)
	f.wg.Add(1)
	go func() { defer f.wg.Done(); r.leases.run(ctx) }()
	f.wg.Add(1)
	go func() { defer f.wg.Done(); r.dropRetiredLater(ctx) }()
	for _, p := range r.order {
		r.followLocked(f, p)
	}
	r.set.Unlock()
	<-ctx.Done()
	r.set.Lock()
	r.following, r.leases = nil, nil
	r.set.Unlock()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

func (r *Runner) follow(ctx context.Context, p *compiled) error {
	// Export the projection's counter from the start, at 0 until this
	// runner applies a batch (another process may apply them all).
	r.metric(p.Name, func() { r.m.events.WithLabelValues(p.Name).Add(0) })
	backoff := 100 * time.Millisecond
	var busy unsticking
	for ctx.Err() == nil {
		if !r.leased(ctx, p.Name) {
			continue
		}
		began := time.Now() // this catch-up's start
		res, err := r.step1(ctx, p.Name, true)
		pos, more := res.pos, res.more
		if errors.Is(err, errBusy) || errors.Is(err, errLeaseLost) {
			if errors.Is(err, errBusy) {
				r.unstick(ctx, p, &busy)
			}
			wait.Sleep(ctx, 20*time.Millisecond)
			continue
		}
		busy = unsticking{}
		if err != nil && ctx.Err() != nil {
			break // stopped (Run ended, or Remove) mid-batch: not a failure
		}
		if err != nil && errors.Is(err, ErrStopped) {
			r.metric(p.Name, func() {
				r.m.errors.WithLabelValues(p.Name).Inc()
				r.m.stopped.WithLabelValues(p.Name).Set(1)
			})
			r.cfg.Logger.Error("projection stopped: it is followed no more until arr starts again", "projection", p.Name, "position", pos, "err", err)
			return nil
		}
		if err != nil {
			r.metric(p.Name, func() { r.m.errors.WithLabelValues(p.Name).Inc() })
			r.cfg.Logger.Error("projection batch failed; retrying", "projection", p.Name, "position", pos, "err", err, "retry_in", backoff)
			wait.Sleep(ctx, backoff)
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		// A read that did not stop at its limit has caught up with the
		// log as it was: wait for more rather than read again at once.
		if !more {
			if err := r.store.WaitForEvents(ctx, pos); err != nil && ctx.Err() == nil {
				r.cfg.Logger.Warn("waiting for events", "projection", p.Name, "err", err)
				wait.Sleep(ctx, time.Second)
			}
			// Let a trickle of events gather into one batch instead of
			// one transaction per event (read-your-writes does not wait
			// for this: WaitFor applies pending batches itself), and
			// catch up at most once per MinInterval.
			wait.Sleep(ctx, max(r.cfg.Linger, r.cfg.MinInterval-time.Since(began)))
		}
	}
	return nil
}

// leased reports whether this runner holds name's lease, and when it
// does not, waits until its leases change (or a second) first.
func (r *Runner) leased(ctx context.Context, name string) bool {
	r.set.RLock()
	l := r.leases
	r.set.RUnlock()
	if l == nil || l.holds(name) {
		return true
	}
	select {
	case <-ctx.Done():
	case <-l.changed():
	case <-time.After(time.Second):
	}
	return false
}

// errBusy says another runner (or a rebuild's swap) holds the checkpoint.
var errBusy = errors.New("checkpoint held by another runner")

// errLeaseLost says a follower's lease expired before its batch could
// commit: the batch is rolled back.
var errLeaseLost = errors.New("the projection's lease expired before the batch committed")

// holdsLease reports whether this runner still holds name's lease (see
// leases.holds); a runner not running holds none.
func (r *Runner) holdsLease(name string) bool {
	r.set.RLock()
	l := r.leases
	r.set.RUnlock()
	return l != nil && l.holds(name)
}

// Step applies at most one batch of a projection and returns the checkpoint
// after it and how many events it applied. It reads the batch first, then
// locks the checkpoint (skipping it if another runner holds it, so no
// connection ever waits on the lock), checks that nobody advanced it
// meanwhile, applies the events and advances the checkpoint, in one
// transaction. The batch runs to completion even if ctx ends meanwhile
// (bounded by BatchTimeout), so shutdown never leaves a half-applied batch.
func (r *Runner) Step(ctx context.Context, name string) (uint64, int, error) {
	res, err := r.step1(ctx, name, false)
	return res.pos, res.n, err
}

// stepResult is the outcome of a step: the checkpoint after it (or where
// it stopped), how many events it applied, whether more events may be
// waiting right after it (the read was full, or the batch was cut short)
// and whether a fault of the projection was on record (any runner's), so
// a successful step can clear it.
type stepResult struct {
	pos     uint64
	n       int
	more    bool
	faulted bool
}

// step1 is Step that also says whether more events may be waiting right
// after the batch. A leased step (a follower's) commits only while this
// runner holds the projection's lease.
func (r *Runner) step1(ctx context.Context, name string, leased bool) (stepResult, error) {
	p, err := r.get(name)
	if err != nil {
		return stepResult{}, err
	}
	clock := newBatchClock(ctx, r.batchTimeout(name))
	defer clock.stop()
	bctx := clock.ctx
	start := time.Now()
	res, err := r.step(clock, p, leased)
	if err != nil && leased && !errors.Is(err, errLeaseLost) && !r.holdsLease(name) {
		// A batch that failed after its lease expired (a holder woken
		// from a freeze, whose session the server ended) is not a fault
		// of the projection: its next holder applies it.
		err = fmt.Errorf("%w: %w", errLeaseLost, err)
	}
	switch {
	case err == nil:
		// A fault recorded by this runner or another is over: the
		// projection just read (and applied) past its checkpoint.
		if r.noteSuccess(name) || res.faulted {
			r.clearFault(name)
		}
	case !errors.Is(err, errBusy) && !errors.Is(err, errLeaseLost) && ctx.Err() == nil:
		r.noteFailure(name, res.pos)
		r.recordFault(p, res.pos, err)
	}
	if err != nil && clock.ranOut() {
		timeout := clock.timeout()
		next := min(2*timeout, r.cfg.MaxBatchTimeout)
		r.mu.Lock()
		r.timeouts[name] = next
		r.mu.Unlock()
		r.cfg.Logger.Warn("projection batch ran out of time; the next try gets longer", "projection", name, "timeout", timeout, "next_timeout", next)
		return res, fmt.Errorf("batch ran out of its %s (%w): %w", timeout, context.DeadlineExceeded, err)
	}
	if err == nil && res.n > 0 {
		r.mu.Lock()
		delete(r.timeouts, name)
		r.mu.Unlock()
		r.observe(bctx, name, res.pos, res.n, time.Since(start))
	}
	return res, err
}

// readLimit is how many events the next read of a projection asks for.
func (r *Runner) readLimit(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.readLimits[name]; ok {
		return n
	}
	return r.cfg.BatchSize
}

// noteCut sets the next read's limit from how many of the read events
// (read) Cut kept (kept): a batch cut short reads next about as many as
// it kept, an eighth more, rather than BatchSize. A bulk load's row
// chunks are cut at some 40 a batch: reading 2,000 of them each time read
// (and detoasted) the whole rest of the load again for every batch. A
// batch not cut short reads BatchSize again next.
func (r *Runner) noteCut(name string, kept, read int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if kept >= read {
		delete(r.readLimits, name)
		return
	}
	r.readLimits[name] = min(r.cfg.BatchSize, kept+kept/8+1)
}

func (r *Runner) batchTimeout(name string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.timeouts[name]; ok {
		return t
	}
	return r.cfg.BatchTimeout
}

// step reads a batch after the checkpoint and applies it (see Step). A
// read that found only events of types the projection does not handle
// only advances the checkpoint. A leased step rolls back instead of
// committing once the runner's lease of p has expired.
func (r *Runner) step(clock *batchClock, p *compiled, leased bool) (stepResult, error) {
	bctx, name := clock.ctx, p.Name
	var from int64
	var faulted bool
	if err := r.pool.QueryRow(bctx, `SELECT c.position, EXISTS (SELECT 1 FROM projection_faults f WHERE f.projection = c.name)
		FROM public.projection_checkpoints c WHERE c.name = $1`, name).Scan(&from, &faulted); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return stepResult{}, fmt.Errorf("projection %s is not set up (run arr migrate or arr up)", name)
		}
		return stepResult{}, fmt.Errorf("reading checkpoint: %w", err)
	}
	at := stepResult{pos: uint64(from), faulted: faulted} // a step that stops here
	rd, err := r.read(bctx, p, uint64(from), r.readLimit(name))
	if err != nil {
		return at, err
	}
	events := cut(p, rd.events)
	r.noteCut(name, len(events), len(rd.events))
	if p.BatchTimeout != nil && len(events) > 0 {
		clock.extend(min(p.BatchTimeout(events), r.cfg.MaxBatchTimeout))
	}
	cutShort := len(events) < len(rd.events)
	more := rd.more || cutShort
	if len(events) == 0 {
		pos := uint64(from)
		if rd.upTo > pos { // only events of other types (more may follow)
			if pos, err = r.skip(bctx, name, from, int64(rd.upTo)); err != nil {
				return stepResult{pos: pos, faulted: faulted}, err
			}
		}
		r.observe(bctx, name, pos, 0, 0)
		return stepResult{pos: pos, more: more, faulted: faulted}, nil
	}
	// The checkpoint goes up to where the read went, or past the batch's
	// last event when the batch was cut short.
	last := rd.upTo
	if cutShort {
		last = events[len(events)-1].Position
	}
	res, err := r.commitBatch(bctx, p, from, last, events, leased)
	res.faulted = faulted
	if err == nil {
		res.more = res.more || more
	}
	return res, err
}

// commitBatch applies events, read after checkpoint from, in one
// transaction that moves the checkpoint to last (see step).
func (r *Runner) commitBatch(bctx context.Context, p *compiled, from int64, last uint64, events []eventstore.Event, leased bool) (stepResult, error) {
	name := p.Name
	at := stepResult{pos: uint64(from)}
	tx, err := beginBatch(bctx, r.txPool(p))
	if err != nil {
		return at, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	// The first statement locks the checkpoint row and sets the batch's
	// session up, in one round trip. Read models are derived from the
	// log: a batch whose commit is lost in a PostgreSQL crash takes its
	// checkpoint with it and is applied again, so the commit need not wait
	// for the WAL flush (synchronous_commit off). This keeps the
	// projections' many small commits off the fsync path of the event log.
	// The server ends the session of a batch left idle for BatchIdle (its
	// process frozen), freeing the row before the lease is free: the
	// batch can never commit after its holder lost the lease. The BEGIN
	// sets that bound already (beginBatch), this statement again. The batch
	// lock names this transaction as the projection's batch, so the next
	// holder can find and end it should its session have switched that
	// timeout off (unstick).
	var pos int64
	err = tx.QueryRow(bctx, batchLockSQL(p), name, strconv.FormatInt(BatchIdle.Milliseconds(), 10)).Scan(&pos, nil, nil, nil)
	if errors.Is(err, pgx.ErrNoRows) {
		return at, errBusy
	}
	if err != nil {
		return at, fmt.Errorf("locking checkpoint: %w", err)
	}
	at.pos = uint64(pos)
	if pos != from {
		at.more = true
		return at, nil // another runner got there first; read again
	}
	if err := setSearchPath(bctx, tx, Schema(name)); err != nil {
		return at, fmt.Errorf("search path: %w", err)
	}
	var parked []ParkedEvent
	if r.isolateNext(p, uint64(from)) {
		if parked, err = applyIsolated(bctx, tx, r.reg, p, events); err != nil {
			return at, fmt.Errorf("applying events %d..%d one by one: %w", events[0].Position, events[len(events)-1].Position, err)
		}
		if err := insertParked(bctx, tx, parked); err != nil {
			return at, err
		}
	} else if err := apply(bctx, tx, r.reg, p, events); err != nil {
		return at, fmt.Errorf("applying events %d..%d: %w", events[0].Position, events[len(events)-1].Position, &applyError{err})
	}
	if _, err := tx.Exec(bctx, `UPDATE public.projection_checkpoints SET position = $2, updated_at = now() WHERE name = $1`, name, int64(last)); err != nil {
		return at, fmt.Errorf("advancing checkpoint: %w", err)
	}
	if leased && !r.holdsLease(name) {
		return at, errLeaseLost
	}
	if err := tx.Commit(bctx); err != nil {
		return at, fmt.Errorf("commit: %w", err)
	}
	r.reportParked(parked)
	return stepResult{pos: last, n: len(events)}, nil
}

// batchBeginSQL opens a batch's transaction and sets its session's
// idle_in_transaction_session_timeout to BatchIdle in the same round trip
// (one simple query, so the server runs both before it reads again). Set
// any later, a process frozen between the BEGIN and the statement that
// sets it would leave its session idle in its transaction with no bound:
// ended by nobody (the next holder ends only a batch holding the batch
// lock), and, if frozen after the server had parsed the batch's first
// statement (pgx prepares a statement in its own round trip the first
// time a connection runs it), holding that statement's lock on
// projection_checkpoints.
var batchBeginSQL = fmt.Sprintf(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = %d`, BatchIdle.Milliseconds())

// beginBatch begins a batch's transaction in b, bounded by the server
// from its first round trip (batchBeginSQL).
func beginBatch(ctx context.Context, b Beginner) (pgx.Tx, error) {
	return b.BeginTx(ctx, pgx.TxOptions{BeginQuery: batchBeginSQL})
}

// readResult is one read of the log for a projection: its events, the
// position the read covered (upTo: the checkpoint may move there once the
// batch is applied) and whether it stopped at its limit, so more events
// may follow at once (more).
type readResult struct {
	events []eventstore.Event
	upTo   uint64
	more   bool
}

// read reads the batch after `from`: only the projection's event types
// when it names them (by the store, when it is an eventstore.TypeReader,
// else here), else every event.
func (r *Runner) read(ctx context.Context, p *compiled, from uint64, limit int) (readResult, error) {
	if tr, ok := r.store.(eventstore.TypeReader); ok && p.filtered {
		events, upTo, err := tr.ReadAllOfTypes(ctx, from, limit, p.types)
		return readResult{events: events, upTo: upTo, more: len(events) == limit}, err
	}
	events, err := r.store.ReadAll(ctx, from, limit)
	if err != nil || len(events) == 0 {
		return readResult{upTo: from}, err
	}
	res := readResult{upTo: events[len(events)-1].Position, more: len(events) == limit}
	if p.filtered {
		events = slices.DeleteFunc(events, func(e eventstore.Event) bool { return !slices.Contains(p.types, e.Type) })
	}
	res.events = events
	return res, nil
}

// skip advances the checkpoint from `from` to `to` over events the
// projection does not handle, in one round trip: the checkpoint is locked
// (skipped if another runner holds it) and moved only if nobody moved it
// meanwhile. Like a batch, the commit does not wait for a flush.
func (r *Runner) skip(ctx context.Context, name string, from, to int64) (uint64, error) {
	var cur *int64
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	b.Queue(`WITH cur AS (SELECT name, position FROM projection_checkpoints WHERE name = $1 FOR UPDATE SKIP LOCKED),
upd AS (UPDATE projection_checkpoints c SET position = $3, updated_at = now() FROM cur WHERE c.name = cur.name AND cur.position = $2)
SELECT (SELECT position FROM cur)`, name, from, to).QueryRow(func(row pgx.Row) error { return row.Scan(&cur) })
	b.Queue(`COMMIT`)
	if err := r.pool.SendBatch(ctx, b).Close(); err != nil {
		return uint64(from), fmt.Errorf("advancing checkpoint past unhandled events: %w", err)
	}
	switch {
	case cur == nil:
		return uint64(from), errBusy
	case *cur != from:
		return uint64(*cur), nil // another runner got there first
	}
	return uint64(to), nil
}

func (r *Runner) observe(ctx context.Context, name string, pos uint64, n int, took time.Duration) {
	head := r.knownHead(ctx)
	r.metric(name, func() {
		r.m.position.WithLabelValues(name).Set(float64(pos))
		if n > 0 {
			r.m.events.WithLabelValues(name).Add(float64(n))
			r.m.batches.WithLabelValues(name).Observe(took.Seconds())
		}
		r.m.lag.WithLabelValues(name).Set(float64(head - min(head, pos)))
	})
}

// metric runs set, which updates projection name's series, if the runner
// still has name: a batch that finishes after Remove (which deletes the
// series under the same lock) does not bring them back.
func (r *Runner) metric(name string, set func()) {
	r.set.RLock()
	defer r.set.RUnlock()
	if _, ok := r.byName[name]; ok {
		set()
	}
}

// knownHead is the log head, read from the store at most every headEvery:
// a lag computed from it may be low by what the log grew since, never high.
func (r *Runner) knownHead(ctx context.Context) uint64 {
	r.mu.Lock()
	head, fresh := r.head, time.Since(r.headAt) < headEvery
	if !fresh {
		r.headAt = time.Now() // one reader at a time refreshes it
	}
	r.mu.Unlock()
	if fresh {
		return head
	}
	if h, err := r.store.Head(ctx); err == nil {
		r.mu.Lock()
		r.head = max(r.head, h)
		head = r.head
		r.mu.Unlock()
	}
	return head
}

// batchLockSQL is the first statement of p's batch (see step): it locks
// the checkpoint row, sets the session up and, in arr's own sessions,
// takes the batch lock that names the transaction as p's batch. A
// projection with a SessionRole has its sessions named by their role instead.
func batchLockSQL(p *compiled) string {
	mark := `pg_try_advisory_xact_lock(hashtext('arr-projection-batch'), hashtext($1))`
	if p.SessionRole != "" {
		mark = `true`
	}
	return `SELECT position, pg_catalog.set_config('synchronous_commit', 'off', true), pg_catalog.set_config('idle_in_transaction_session_timeout', $2, true), ` +
		mark + ` FROM public.projection_checkpoints WHERE name = $1 FOR UPDATE SKIP LOCKED`
}
