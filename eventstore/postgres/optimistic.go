package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/eventstore"
)

// headCache is what the writer believes the log's head to be after its
// last commit: the position, the tree (size = position, frontier) and a
// floor for the next recorded time, plus the versions of streams it has
// seen. It is a guess that a one-round-trip commit checks under the head
// lock (see commitOptimistic); only the writer goroutine touches it.
type headCache struct {
	valid    bool
	head     int64
	frontier []byte
	// now is the recorded time of the event at head, or later.
	now time.Time
	// offset is the server's clock minus the writer's, underestimated:
	// the server's clock read under the lock minus the writer's once the
	// answer arrived.
	offset time.Duration
	// streams holds stream versions; -1 for a stream known not to exist.
	streams map[string]int64
}

// maxCachedStreams bounds headCache.streams; past it the map starts over.
const maxCachedStreams = 1 << 16

// maxClockLag is how far behind the server's clock the recorded time of a
// one-round-trip commit may be (it is the writer's clock plus offset).
const maxClockLag = time.Second

// errStale says a one-round-trip commit found the head or a stream not as
// the writer's cache had it, or could not be planned from the cache; the
// transaction, if any, was rolled back and nothing was written.
var errStale = errors.New("the writer's cached head is stale")

// rememberStreams records stream versions (current, then the new ones) in
// the cache; streams of the batch in neither are known not to exist.
func (c *headCache) rememberStreams(streams []string, current, versions map[string]int64) {
	if c.streams == nil || len(c.streams)+len(streams) > maxCachedStreams {
		c.streams = make(map[string]int64, len(streams))
	}
	for _, id := range streams {
		v, ok := versions[id]
		if !ok {
			v, ok = current[id]
		}
		if !ok {
			v = -1
		}
		c.streams[id] = v
	}
}

// guessed returns the cached versions of streams as a plan's current
// versions, guessing that a stream the cache does not know does not exist
// (the usual case for a new stream; the server checks every guess).
func (c *headCache) guessed(streams []string) (current map[string]int64, versions []int64) {
	current = make(map[string]int64, len(streams))
	versions = make([]int64, len(streams))
	for i, id := range streams {
		v, ok := c.streams[id]
		if !ok {
			v = -1
		}
		if v >= 0 {
			current[id] = v
		}
		versions[i] = v
	}
	return current, versions
}

// guard is what a one-round-trip commit checks under the head lock.
type guard struct {
	head     int64
	frontier []byte
	now      time.Time
	streams  []string
	versions []int64 // -1: the stream does not exist
	// idle is Config.HeadIdle in milliseconds: the transaction's
	// idle_in_transaction_session_timeout (see lockHead), which matters
	// when a BeforeCommit hook gives COMMIT a round trip of its own.
	idle string
}

// The guard's statements abort the transaction, and so the rest of the
// pipeline, with a division by zero (SQLSTATE 22012) when the head or a
// stream is not as cached. They are two statements because a statement's
// snapshot is taken before it waits for the lock: the head row itself is
// re-read once locked (FOR UPDATE), but the streams are read by the next
// statement, whose snapshot includes every commit before the lock was
// granted.
//
// The commit records the time the writer estimated for the server's clock
// (its own plus headCache.offset) before sending, not clock_timestamp()
// under the lock as the locked path does, since the time is in the leaf
// hash. The head check requires that time to be no later than the
// server's clock once the lock is held, and at most maxClockLag earlier:
// so it is at most the clock any later commit reads under the lock, and
// recorded times still follow positions across writers and processes.
const (
	guardHead = `SELECT 1 / (h.position = $1 AND h.tree_size = $1 AND h.tree_frontier = $2
		AND $3::timestamptz <= clock_timestamp() AND clock_timestamp() - $3::timestamptz < $4 * interval '1 microsecond')::int,
		set_config('idle_in_transaction_session_timeout', $5, true)
		FROM (SELECT position, tree_size, tree_frontier FROM event_log_head WHERE id FOR UPDATE) AS h`
	guardStreams = `SELECT 1 / (count(*) = 0)::int
		FROM unnest($1::text[], $2::bigint[]) AS c(s, v) LEFT JOIN event_streams e ON e.stream_id = c.s
		WHERE e.version IS DISTINCT FROM nullif(c.v, -1)`
)

// queue queues BEGIN and the guard's statements, each read back by a
// callback: a failed check is errStale.
func (g *guard) queue(b *pgx.Batch) {
	onExec(b.Queue(`BEGIN`), failsAs("begin"))
	onExec(b.Queue(guardHead, g.head, g.frontier, g.now, maxClockLag.Microseconds(), g.idle), checked("head"))
	onExec(b.Queue(guardStreams, g.streams, g.versions), checked("stream versions"))
}

// checked is the onExec callback of a guard statement that checks the
// cached what: a division by zero says the cache was stale.
func checked(what string) func(pgconn.CommandTag, error) error {
	return func(_ pgconn.CommandTag, err error) error {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "22012" {
			err = errStale
		}
		if err != nil {
			return fmt.Errorf("checking the cached %s: %w", what, err)
		}
		return nil
	}
}

// commitOptimistic commits a group in one round trip, from the writer's
// cache: it plans the batch on the cached head and stream versions, then
// sends BEGIN, the guard, the events, advanceHead and COMMIT in one
// pipeline. It returns errStale, having written nothing, when the cache
// cannot plan the batch (an expectation fails against it, the batch needs
// COPY) or the server finds it stale; commit then falls back to reading
// the head under the lock (commitTx), which refreshes the cache.
func (s *Store) commitOptimistic(ctx context.Context, appends []eventstore.Append) (_ []eventstore.AppendResult, _ []error, err error) {
	c := &s.cache
	ids, streams := batchKeys(appends)
	if !c.valid || len(ids) >= copyThreshold {
		return nil, nil, errStale
	}
	tree, err := decodeTree(c.head, c.frontier)
	if err != nil {
		return nil, nil, errStale
	}
	now := time.Now().Add(c.offset).Truncate(time.Microsecond)
	if now.Before(c.now) {
		now = c.now // recorded times follow positions
	}
	current, versions := c.guessed(streams)
	lk := locked{head: c.head, now: now, tree: tree, current: current}
	p := plan(appends, nil, lk, len(ids))
	for _, e := range p.errs {
		if e != nil {
			// Maybe a stale guess, maybe a retry: the locked path decides.
			return nil, nil, errStale
		}
	}
	if p.cols.n == 0 {
		return nil, nil, errStale
	}
	c.valid = false // until this commit is known to have committed
	commitSent := false
	defer func() {
		var pgErr *pgconn.PgError
		if err != nil && (!commitSent || errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback)) {
			err = notAppended{err}
		}
	}()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, p.errs, fmt.Errorf("append: acquiring a connection: %w", err)
	}
	defer endTx(conn)
	s.inflight.Store(conn.Conn().PgConn())
	defer s.inflight.Store(nil)
	g := &guard{head: c.head, frontier: c.frontier, now: now, streams: streams, versions: versions, idle: s.headIdle}
	stop := s.watchHead(ctx) // while it waits for the lock
	w, err := s.writeLocked(ctx, conn, writeRequest{plan: p, streams: streams, head: lk, guard: g, dupErr: errIDsExist})
	commitSent = w.commitSent
	stop()
	if err != nil {
		return nil, p.errs, err
	}
	s.remember(lk, p, streams, c.offset)
	return p.results, p.errs, nil
}

// remember sets the cache to the head a commit left: lk as read or cached,
// its tree extended by the commit's events, and p's positions and versions.
func (s *Store) remember(lk locked, p planned, streams []string, offset time.Duration) {
	c := &s.cache
	c.valid, c.head, c.now, c.offset = true, p.pos, lk.now, offset
	c.frontier = frontierBytes(lk.tree)
	c.rememberStreams(streams, lk.current, p.versions)
}
