package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
)

// copyThreshold is the batch size from which COPY beats a multi-row INSERT.
const copyThreshold = 256

// querier is what commit needs of a connection or transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

type stored struct {
	stream   string
	version  int64
	position int64
}

// commit writes the appends in one transaction. errs[i] is the append's own
// failure (a wrong expected version, a reused event id); err is a failure of
// the whole transaction, which then applies to every append without its own.
// all-or-nothing (bulk) turns any single failure into a failure of all.
//
// A group commit first assumes that none of its event ids is in the log yet,
// the usual case, and does not look them up. If an expectation fails (it may
// be a retry) it looks them up before deciding; if the insert meets an id
// already in the log, the transaction is rolled back and done again with
// the look-up. Bulk appends find duplicates through the unique index
// instead (see AppendBulk).
//
// The tree must cover the whole log before a commit extends it: if it does
// not (events written before it existed, or by a binary without it), the
// commit catches it up first (catchUpTree) and tries again.
func (s *Store) commit(ctx context.Context, appends []eventstore.Append, allOrNothing bool) ([]eventstore.AppendResult, []error, error) {
	lookup := false
	if !allOrNothing {
		// The writer's group commits (and only they: the cache is the
		// writer's) first try one round trip.
		results, errs, err := s.commitOptimistic(ctx, appends)
		switch {
		case errors.Is(err, errIDsExist):
			lookup = true
		case !errors.Is(err, errStale):
			return results, errs, err
		}
	}
	for attempt := 0; ; attempt++ {
		results, errs, err := s.commitTx(ctx, appends, allOrNothing, lookup)
		switch {
		case errors.Is(err, errIDsExist) && !lookup:
			lookup = true
		case errors.Is(err, errTreeBehind) && attempt < 3:
			if err := s.catchUpTree(ctx); err != nil {
				return nil, errs, fmt.Errorf("append: %w", err)
			}
		default:
			return results, errs, err
		}
	}
}

// errIDsExist says a group commit that did not look its event ids up met
// one already in the log, and was rolled back.
var errIDsExist = errors.New("some event ids are already in the log")

// commitTx is one attempt at commit. It takes two round trips: (1) BEGIN,
// lock the head, read the streams' versions; (2) insert the events, update
// the streams and the head, notify, COMMIT. A BeforeCommit hook gets COMMIT
// its own round trip, after the hook; COPY (bulk) and an id look-up take
// one more each.
//
// A failure before COMMIT is sent, or one the server reports, leaves
// nothing written: its error wraps eventstore.ErrNotAppended. A failure
// after (a connection lost, a timeout) may hide a commit.
func (s *Store) commitTx(ctx context.Context, appends []eventstore.Append, allOrNothing, lookup bool) (_ []eventstore.AppendResult, _ []error, err error) {
	commitSent := false
	defer func() {
		var pgErr *pgconn.PgError
		if err != nil && (!commitSent || errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback)) {
			err = notAppended{err}
		}
	}()
	errs := make([]error, len(appends))
	ids, streams := batchKeys(appends)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, errs, fmt.Errorf("append: acquiring a connection: %w", err)
	}
	defer endTx(conn)
	s.inflight.Store(conn.Conn().PgConn())
	defer s.inflight.Store(nil)

	if !allOrNothing {
		s.cache.valid = false // until this commit is known to have committed
	}
	// Round trip 1: the head lock and the streams' versions.
	stop := s.watchHead(ctx) // while it waits for the lock
	lk, err := lockHead(ctx, conn, streams, s.headIdle)
	stop()
	if err != nil {
		return nil, errs, err
	}
	offset := lk.now.Sub(time.Now())
	if lk.tree == nil {
		return nil, errs, errTreeBehind
	}
	p, err := planLocked(ctx, conn, appends, ids, lk, lookup, allOrNothing)
	if err != nil {
		if p.errs == nil {
			p.errs = errs
		}
		return nil, p.errs, err
	}
	if allOrNothing {
		for _, e := range p.errs {
			if e != nil {
				return nil, p.errs, e
			}
		}
	}
	if p.cols.n == 0 {
		if err := commitTag(conn.Exec(ctx, `COMMIT`)); err != nil {
			return nil, p.errs, fmt.Errorf("append: %w", err)
		}
		if !allOrNothing {
			s.remember(lk, p, streams, offset)
		}
		return p.results, p.errs, nil
	}
	// An id already in the log fails the insert with a unique violation.
	// Unless we looked the ids up, that means: do it again, looking them up.
	dupErr := errDuplicateInsert
	if !p.lookup && !allOrNothing {
		dupErr = errIDsExist
	}
	// Round trip 2 (and the hook's, COPY's): the events, the head, COMMIT.
	w, err := s.writeLocked(ctx, conn, writeRequest{plan: p, streams: streams, head: lk, dupErr: dupErr})
	commitSent = w.commitSent
	if err != nil {
		return nil, p.errs, err
	}
	if !allOrNothing {
		s.remember(lk, p, streams, offset)
	}
	return p.results, p.errs, nil
}

// batchKeys lists the appends' event ids and their streams (each once,
// in order of first appearance).
func batchKeys(appends []eventstore.Append) (ids []uuid.UUID, streams []string) {
	seen := make(map[string]struct{}, len(appends))
	for _, a := range appends {
		for _, e := range a.Events {
			ids = append(ids, e.ID)
		}
		if _, ok := seen[a.StreamID]; !ok {
			seen[a.StreamID] = struct{}{}
			streams = append(streams, a.StreamID)
		}
	}
	return ids, streams
}

// locked is what a commit reads under the head lock.
type locked struct {
	head    int64
	now     time.Time
	tree    *transparency.Tree
	current map[string]int64 // the streams' versions
}

// lockHead begins the transaction, takes the head row lock and reads the
// head and the streams' versions, in one round trip.
//
// The head row lock orders every writer in every process: positions are
// handed out in the order transactions commit. Each statement after it
// takes a fresh snapshot (READ COMMITTED), so it sees everything the
// previous holder of the lock committed. FOR UPDATE takes the lock
// without writing a row version (a no-op UPDATE would write one, with
// the tree's frontier, on every commit). The clock is read in the outer
// query, once the lock is held, so recorded times follow positions.
//
// The same statement sets the transaction's idle_in_transaction_session_timeout
// to idle (milliseconds, Config.HeadIdle): while the head is locked, the
// server ends the transaction of a writer that does not send its next
// statement in time (a frozen process), so that no process stalls the
// log for longer.
func lockHead(ctx context.Context, conn *pgxpool.Conn, streams []string, idle string) (lk locked, err error) {
	defer domain.Wrap(&err, "append")
	var treeSize int64
	var frontier []byte
	b := &pgx.Batch{}
	onExec(b.Queue(`BEGIN`), failsAs("begin"))
	b.Queue(`SELECT h.position, clock_timestamp(), h.tree_size, h.tree_frontier, set_config('idle_in_transaction_session_timeout', $1, true)
		FROM (SELECT position, tree_size, tree_frontier FROM event_log_head WHERE id FOR UPDATE) AS h`, idle).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&lk.head, &lk.now, &treeSize, &frontier, nil); err != nil {
			return fmt.Errorf("locking log head: %w", err)
		}
		return nil
	})
	lk.current = make(map[string]int64, len(streams))
	b.Queue(`SELECT stream_id, version FROM event_streams WHERE stream_id = ANY($1)`, streams).Query(func(rows pgx.Rows) error {
		var id string
		var v int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &v}, func() error { lk.current[id] = v; return nil }); err != nil {
			return fmt.Errorf("reading stream versions: %w", err)
		}
		return nil
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return locked{}, err
	}
	// The tree stays nil when it does not cover the log up to the head.
	if treeSize == lk.head {
		if lk.tree, err = decodeTree(treeSize, frontier); err != nil {
			return locked{}, err
		}
	}
	return lk, nil
}

// planned is a commit's plan: each append's result or failure, the rows
// to write, the streams' new versions and the last position.
type planned struct {
	results  []eventstore.AppendResult
	errs     []error
	cols     *columns
	versions map[string]int64
	pos      int64
	// lookup says the plan looked the event ids up in the log.
	lookup bool
}

// planLocked plans the commit under the lock, looking the event ids up
// first when lookup is set, or after the fact when an expectation failed
// without it (it may be a retry of an append already in the log; not for
// an all-or-nothing commit). If that look-up fails, the first plan comes
// back with the error.
func planLocked(ctx context.Context, conn *pgxpool.Conn, appends []eventstore.Append, ids []uuid.UUID, lk locked, lookup, allOrNothing bool) (planned, error) {
	var existing map[uuid.UUID]stored
	var err error
	if lookup {
		if existing, err = lookupIDs(ctx, conn, ids); err != nil {
			return planned{}, err
		}
	}
	p := plan(appends, existing, lk, len(ids))
	p.lookup = lookup
	if lookup || allOrNothing || !slices.ContainsFunc(p.errs, func(e error) bool { return e != nil }) {
		return p, nil
	}
	if existing, err = lookupIDs(ctx, conn, ids); err != nil {
		return p, err
	}
	p = plan(appends, existing, lk, len(ids))
	p.lookup = true
	return p, nil
}

// writeRequest is what writeLocked writes.
type writeRequest struct {
	plan planned
	// streams are the batch's streams, each once, in order of first
	// appearance (batchKeys).
	streams []string
	// head is the head the plan was made on: read under the lock, or the
	// writer's cache (with a guard).
	head locked
	// guard, for a one-round-trip commit, begins the transaction in the
	// same pipeline and checks under the head lock the head the plan was
	// made on; nil when the transaction has begun and holds the lock.
	guard *guard
	// dupErr is what an event id already in the log fails the insert with.
	dupErr error
}

// written is writeLocked's outcome, failed or not.
type written struct {
	// commitSent says COMMIT was sent: a failure after it may hide a
	// commit; one before it leaves nothing written.
	commitSent bool
}

// writeLocked writes the planned rows (COPY from copyThreshold rows, else
// an INSERT in the same round trip), advances the streams, the tree and
// the head, and commits, running the BeforeCommit hook first if there is
// one. Each statement of the pipeline is read back by the code that
// queued it (the guard's, the insert's, advanceHead's, COMMIT's).
func (s *Store) writeLocked(ctx context.Context, conn *pgxpool.Conn, req writeRequest) (w written, err error) {
	defer domain.Wrap(&err, "append")
	// The events' leaves extend the tree as they are encoded: row by row
	// while COPY streams them, all at once before an INSERT.
	cols := req.plan.cols
	cols.tree = req.head.tree
	useCopy := cols.n >= copyThreshold
	if useCopy {
		if err := cols.copy(ctx, conn.Conn().PgConn()); err != nil {
			return w, insertErr(err, cols.n, req.dupErr)
		}
	} else if err := cols.hashLeaves(); err != nil {
		return w, err
	}
	b := &pgx.Batch{}
	if req.guard != nil {
		req.guard.queue(b)
	}
	if !useCopy {
		cols.queueInsert(b, req.dupErr)
	}
	queueAdvance(b, req)
	hook := s.cfg.BeforeCommit
	if hook == nil {
		onExec(b.Queue(`COMMIT`), commitTag)
		w.commitSent = true
	}
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return w, err
	}
	if hook != nil {
		w.commitSent, err = commitAfter(ctx, conn, hook, cols.n)
	}
	return w, err
}

// queueAdvance queues advanceHead for the streams of req that the plan
// moves, the tree nodes its events complete and its last position.
func queueAdvance(b *pgx.Batch, req writeRequest) {
	p, cols, tree := req.plan, req.plan.cols, req.head.tree
	var upStreams []string
	var upVersions []int64
	for _, id := range req.streams {
		if v, ok := p.versions[id]; ok {
			upStreams, upVersions = append(upStreams, id), append(upVersions, v)
		}
	}
	onExec(b.Queue(advanceHead, upStreams, upVersions, req.head.now, cols.nodes.levels, cols.nodes.idxs, cols.nodes.hashes,
		p.pos, int64(tree.Size()), frontierBytes(tree), strconv.FormatInt(p.pos, 10)), failsAs("updating streams, tree and head"))
}

// commitAfter runs the BeforeCommit hook, then sends COMMIT in a round
// trip of its own; sent says it was sent.
func commitAfter(ctx context.Context, conn *pgxpool.Conn, hook func(context.Context, int) error, events int) (sent bool, err error) {
	if err := hook(ctx, events); err != nil {
		return false, fmt.Errorf("aborted before commit: %w", err)
	}
	return true, commitTag(conn.Exec(ctx, `COMMIT`))
}

// advanceHead is what a commit does after inserting its events, in one
// statement (each statement of a commit runs while the head lock is held,
// so each one more is paid by every writer waiting for it): the streams'
// new versions, the tree nodes the events completed (minStoredLevel and
// up; often none), the head's position, tree size and frontier, and the
// notification of the new head.
const advanceHead = `WITH streams AS (
	INSERT INTO event_streams (stream_id, version, updated_at)
	SELECT s, v, $3 FROM unnest($1::text[], $2::bigint[]) AS t(s, v)
	ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at
), nodes AS (
	INSERT INTO event_tree_nodes (level, idx, hash) SELECT * FROM unnest($4::smallint[], $5::bigint[], $6::bytea[])
)
UPDATE event_log_head SET position = $7, tree_size = $8, tree_frontier = $9 WHERE id
RETURNING pg_notify('` + channel + `', $10)`

// endTx rolls back whatever transaction is still open on conn (after a
// failure) and gives conn back to the pool, which closes it if that failed.
func endTx(conn *pgxpool.Conn) {
	if pc := conn.Conn().PgConn(); !pc.IsClosed() && pc.TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = conn.Exec(ctx, `ROLLBACK`)
		cancel()
	}
	conn.Release()
}

// commitTag checks the result of COMMIT: PostgreSQL answers COMMIT in a
// failed transaction with ROLLBACK.
func commitTag(tag pgconn.CommandTag, err error) error {
	if err == nil && tag.String() != "COMMIT" {
		err = pgx.ErrTxCommitRollback
	}
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// plan assigns positions from lk.head+1 and stream versions to the appends
// that are neither duplicates (per existing) nor failed expectations
// against lk's stream versions, and returns their results, rows and the
// streams' new versions.
func plan(appends []eventstore.Append, existing map[uuid.UUID]stored, lk locked, nEvents int) planned {
	p := planned{
		results:  make([]eventstore.AppendResult, len(appends)),
		errs:     make([]error, len(appends)),
		versions: maps.Clone(lk.current),
		cols:     newColumns(nEvents),
		pos:      lk.head,
	}
	inBatch := map[uuid.UUID]int{} // event id -> index of the append that wrote it in this batch
	for i, a := range appends {
		if dup, ok, err := duplicateOf(a, existing, inBatch, p.results); err != nil {
			p.errs[i] = err
			continue
		} else if ok {
			p.results[i] = dup
			continue
		}
		cur, exists := p.versions[a.StreamID]
		if !a.Expected.Check(uint64(cur), exists) {
			p.errs[i] = &eventstore.WrongExpectedVersionError{StreamID: a.StreamID, Expected: a.Expected, Actual: uint64(max(cur, 0)), ActualExists: exists}
			continue
		}
		v := int64(-1)
		if exists {
			v = cur
		}
		r := eventstore.AppendResult{StreamID: a.StreamID, FirstVersion: uint64(v + 1), FirstPosition: uint64(p.pos + 1)}
		for _, e := range a.Events {
			v++
			p.pos++
			p.cols.add(p.pos, e, a.StreamID, v, lk.now)
			inBatch[e.ID] = i
		}
		r.LastVersion, r.LastPosition = uint64(v), uint64(p.pos)
		p.results[i] = r
		p.versions[a.StreamID] = v
	}
	return p
}

// insertErr names the failure of the events' insert (INSERT or COPY): an
// event id already in the log is dupErr.
func insertErr(err error, n int, dupErr error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return dupErr
	}
	if errors.As(err, &pgErr) && pgErr.Code == "22P02" && pgErr.Where != "" {
		// AppendBulk leaves checking the events' JSON to the server, which
		// parses every json value anyway; its context names the row.
		return fmt.Errorf("event data is not valid JSON (%s): %w", pgErr.Where, err)
	}
	return fmt.Errorf("inserting %d events: %w", n, err)
}

var errDuplicateInsert = errors.New("an event id is already in the log")

// duplicateOf decides whether an append is a retry of one already committed
// (or already accepted earlier in this batch).
func duplicateOf(a eventstore.Append, existing map[uuid.UUID]stored, inBatch map[uuid.UUID]int, results []eventstore.AppendResult) (eventstore.AppendResult, bool, error) {
	var found []stored
	batchIdx := -1
	for _, e := range a.Events {
		if st, ok := existing[e.ID]; ok {
			found = append(found, st)
		} else if j, ok := inBatch[e.ID]; ok {
			batchIdx = j
		}
	}
	switch {
	case batchIdx >= 0:
		if len(found) == 0 && results[batchIdx].StreamID == a.StreamID && int(results[batchIdx].LastVersion-results[batchIdx].FirstVersion)+1 == len(a.Events) {
			r := results[batchIdx]
			r.Duplicate = true
			return r, true, nil
		}
		return eventstore.AppendResult{}, false, eventstore.ErrDuplicateEventID
	case len(found) == 0:
		return eventstore.AppendResult{}, false, nil
	case len(found) != len(a.Events):
		return eventstore.AppendResult{}, false, eventstore.ErrDuplicateEventID
	}
	r := eventstore.AppendResult{StreamID: a.StreamID, Duplicate: true}
	for i, st := range found {
		if st.stream != a.StreamID {
			return eventstore.AppendResult{}, false, eventstore.ErrDuplicateEventID
		}
		if i == 0 {
			r.FirstVersion, r.FirstPosition = uint64(st.version), uint64(st.position)
		}
		r.LastVersion, r.LastPosition = uint64(st.version), uint64(st.position)
	}
	return r, true, nil
}

// lookupIDs finds which of ids are in the log. It runs as an unnamed
// statement so that it is planned for the ids at hand every time: a generic
// plan cached while the table was small would scan the whole table.
func lookupIDs(ctx context.Context, tx querier, ids []uuid.UUID) (map[uuid.UUID]stored, error) {
	out := map[uuid.UUID]stored{}
	rows, err := tx.Query(ctx, `SELECT event_id, stream_id, stream_version, position FROM events WHERE event_id = ANY($1)`, pgx.QueryExecModeCacheDescribe, pgUUIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("append: looking up event ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var st stored
		if err := rows.Scan(&id, &st.stream, &st.version, &st.position); err != nil {
			return nil, fmt.Errorf("append: looking up event ids: %w", err)
		}
		out[id] = st
	}
	return out, rows.Err()
}

// pgUUIDs converts ids for pgx, which encodes a pgtype.UUID directly but a
// uuid.UUID through its text form (driver.Valuer), at several times the cost.
func pgUUIDs(ids []uuid.UUID) []pgtype.UUID {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		out[i] = pgtype.UUID{Bytes: id, Valid: true}
	}
	return out
}

// columns holds a batch of events column by column.
type columns struct {
	n         int
	positions []int64
	ids       []pgtype.UUID
	streams   []string
	versions  []int64
	types     []string
	schemas   []int32
	data      []string
	corr      []pgtype.Text
	cause     []pgtype.Text
	actor     []pgtype.Text
	request   []pgtype.Text
	recorded  time.Time

	// The tree the events extend and what they add to it (see tree.go).
	tree   *transparency.Tree
	hasher eventstore.LeafHasher
	leaves []byte // 32 bytes per event, in row order, once hashed
	nodes  nodeColumns
}

func newColumns(n int) *columns {
	return &columns{
		positions: make([]int64, 0, n), ids: make([]pgtype.UUID, 0, n), streams: make([]string, 0, n),
		versions: make([]int64, 0, n), types: make([]string, 0, n), schemas: make([]int32, 0, n),
		data: make([]string, 0, n), corr: make([]pgtype.Text, 0, n), cause: make([]pgtype.Text, 0, n),
		actor: make([]pgtype.Text, 0, n), request: make([]pgtype.Text, 0, n),
	}
}

func text(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

func (c *columns) add(pos int64, e eventstore.NewEvent, stream string, version int64, now time.Time) {
	c.n++
	c.positions = append(c.positions, pos)
	c.ids = append(c.ids, pgtype.UUID{Bytes: e.ID, Valid: true})
	c.streams = append(c.streams, stream)
	c.versions = append(c.versions, version)
	c.types = append(c.types, e.Type)
	c.schemas = append(c.schemas, int32(max(e.SchemaVersion, 1)))
	c.data = append(c.data, string(dataOrEmpty(e.Data)))
	c.corr = append(c.corr, text(e.Metadata.CorrelationID))
	c.cause = append(c.cause, text(e.Metadata.CausationID))
	c.actor = append(c.actor, text(e.Metadata.Actor))
	c.request = append(c.request, text(e.Metadata.RequestID))
	c.recorded = now
}

const insertEvents = `INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, data,
		correlation_id, causation_id, actor, request_id, recorded_at, leaf_hash)
	SELECT p, i, s, v, t, sv, d::json, co, ca, ac, rq, $12, lh
	FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::int[], $7::text[],
		$8::text[], $9::text[], $10::text[], $11::text[], $13::bytea[]) AS x(p, i, s, v, t, sv, d, co, ca, ac, rq, lh)`

// queueInsert queues the multi-row INSERT of the batch (its leaves hashed);
// an event id already in the log fails it with dupErr.
func (c *columns) queueInsert(b *pgx.Batch, dupErr error) {
	onExec(b.Queue(insertEvents, c.positions, c.ids, c.streams, c.versions, c.types, c.schemas, c.data, c.corr, c.cause, c.actor, c.request, c.recorded, c.leafSlices()),
		func(_ pgconn.CommandTag, err error) error {
			if err != nil {
				return insertErr(err, c.n, dupErr)
			}
			return nil
		})
}
