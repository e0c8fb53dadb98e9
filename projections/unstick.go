package projections

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// unsticking is a follower's record of a checkpoint it finds held.
type unsticking struct {
	since time.Time // first found held (zero: not held)
	tried time.Time // last query for batches left idle (unstickSQL)
	// sampled is when the batches waiting for their client mid-statement
	// were last sampled (stuckSQL), stuck what that sample found.
	sampled time.Time
	stuck   map[int32]stuckState
}

// stuckState is what stuckSQL said of one session: when its state
// began and, during a COPY, the bytes it has read.
type stuckState struct {
	since time.Time
	bytes int64
}

// StuckSample is how often a follower holding a projection's lease
// samples, while its checkpoint stays held, the batch sessions of the
// projection that wait for their client in the middle of a statement
// (stuckSQL); the first sample is taken once the checkpoint has been
// held that long, and a session found again with no progress is ended.
// A holder frozen mid-COPY (identity writes a batch's new rows so) or
// mid-pipeline is not idle in its transaction: neither the server's
// idle_in_transaction_session_timeout (BatchIdle) nor statement_timeout
// ends it, and its checkpoint row would stay locked until it wakes. So
// the next holder ends it about 2 × StuckSample after taking the lease
// (its statement began before the freeze, over BatchIdle before: the
// lease outlives a freeze by LeaseValid at least), within the 2 s
// docs/scale-out.md gives the new holder's first batch.
const StuckSample = 500 * time.Millisecond

// stuckSQL lists the sessions of projection $1's batches (those holding
// its batch lock, or for a projection with a SessionRole, $3, that
// role's sessions in this database) that wait for their client in the
// middle of a statement begun more than $2 ms ago, with what shows
// progress: when the state began and, during a COPY, the bytes it has
// read. A live batch sends each statement whole at once (a COPY of a
// batch streams its rows without pause) and takes milliseconds.
const stuckSQL = `SELECT a.pid, a.state_change, coalesce(c.bytes_processed, -1)
	FROM pg_stat_activity a LEFT JOIN pg_stat_progress_copy c ON c.pid = a.pid
	WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
	AND a.state = 'active' AND a.wait_event = 'ClientRead' AND a.state_change < now() - $2 * interval '1 millisecond'
	AND (a.usename = $3 OR a.pid IN (SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid = hashtext('arr-projection-batch')::oid AND l.objid = hashtext($1)::oid AND l.objsubid = 2))`

// endStuckSQL ends the session of a stuck batch if it is still as sampled.
const endStuckSQL = `SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a LEFT JOIN pg_stat_progress_copy c ON c.pid = a.pid
	WHERE a.pid = $1 AND a.state_change = $2 AND coalesce(c.bytes_processed, -1) = $3
	AND a.state = 'active' AND a.wait_event = 'ClientRead'`

// unstickSQL ends the sessions whose batch of projection $1 (the
// transaction holding its batch lock: a batch, see step, or a rebuild's
// swap or a retry of parked events, see holdCheckpoint) has been idle in its
// transaction for longer than $2: the batch of a frozen process, which
// its session's idle_in_transaction_session_timeout did not end (the
// session may be an analyst's, whose settings are the analyst's). A
// live batch never idles that long: its statements are pipelined (a
// live swap's follow each other, or KeepAlive's).
const unstickSQL = `SELECT a.pid, pg_terminate_backend(a.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND l.classid = hashtext('arr-projection-batch')::oid AND l.objid = hashtext($1)::oid AND l.objsubid = 2
	AND a.state LIKE 'idle in transaction%' AND a.state_change < now() - $2 * interval '1 millisecond'`

// unstickRoleSQL is unstickSQL for a projection with a SessionRole: the sessions of its
// role ($1) in this database left idle in their transaction past $2 (a
// live batch's statements are pipelined; no other transaction of the
// role outlives its statement's bound).
const unstickRoleSQL = `SELECT a.pid, pg_terminate_backend(a.pid) FROM pg_stat_activity a
	WHERE a.usename = $1 AND a.datname = current_database()
	AND a.state LIKE 'idle in transaction%' AND a.state_change < now() - $2 * interval '1 millisecond'`

// unstick is what a follower holding name's lease does while another
// transaction holds name's checkpoint: once it has been held for
// BatchIdle + LeaseCheck, and then at most every LeaseCheck, it ends
// the batch sessions of name left idle past BatchIdle (unstickSQL; for a
// projection with a SessionRole, also its role's sessions, unstickRoleSQL:
// its batches take no batch lock, a rebuild's swap of it does); and every
// StuckSample it ends those found twice waiting for their client
// mid-statement with no progress (endStuck). It costs nothing while
// checkpoints are free.
func (r *Runner) unstick(ctx context.Context, p *compiled, u *unsticking) {
	name := p.Name
	now := time.Now()
	if u.since.IsZero() {
		u.since = now
	}
	held := now.Sub(u.since)
	stuck := held >= StuckSample && now.Sub(u.sampled) >= StuckSample
	idle := held >= BatchIdle+LeaseCheck && now.Sub(u.tried) >= LeaseCheck
	if !stuck && !idle || !r.holdsLease(name) {
		return
	}
	qctx, cancel := context.WithTimeout(ctx, leaseQuery)
	defer cancel()
	if stuck {
		u.sampled = now
		u.stuck = r.endStuck(qctx, p, u.stuck)
	}
	if idle {
		u.tried = now
		r.endIdle(qctx, name, unstickSQL, name)
		if p.SessionRole != "" {
			r.endIdle(qctx, name, unstickRoleSQL, p.SessionRole)
		}
	}
}

// endStuck takes one sample of p's batches waiting for their client
// mid-statement (stuckSQL) and ends those that made no progress since
// prev (the same state since then, no byte of COPY read): a frozen
// process's. It returns the sample, less the sessions it ended.
func (r *Runner) endStuck(ctx context.Context, p *compiled, prev map[int32]stuckState) map[int32]stuckState {
	rows, err := r.pool.Query(ctx, stuckSQL, p.Name, BatchIdle.Milliseconds(), p.SessionRole)
	if err != nil {
		r.cfg.Logger.Warn("sampling the batches of other processes stuck mid-statement", "projection", p.Name, "err", err)
		return prev
	}
	now := map[int32]stuckState{}
	for rows.Next() {
		var pid int32
		var s stuckState
		if err := rows.Scan(&pid, &s.since, &s.bytes); err != nil {
			break
		}
		now[pid] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		r.cfg.Logger.Warn("sampling the batches of other processes stuck mid-statement", "projection", p.Name, "err", err)
		return prev
	}
	for pid, s := range now {
		if was, ok := prev[pid]; !ok || !was.since.Equal(s.since) || was.bytes != s.bytes {
			continue
		}
		var ended bool
		switch err := r.pool.QueryRow(ctx, endStuckSQL, pid, s.since, s.bytes).Scan(&ended); {
		case errors.Is(err, pgx.ErrNoRows): // it moved on meanwhile
			continue
		case err != nil:
			r.cfg.Logger.Warn("ending a batch of another process stuck mid-statement", "projection", p.Name, "backend", pid, "err", err)
			continue
		}
		r.cfg.Logger.Warn("ended the session of a batch waiting for its client mid-statement with no progress (its process frozen?)",
			"projection", p.Name, "backend", pid, "ended", ended, "waiting_since", s.since)
		delete(now, pid)
	}
	return now
}

// endIdle runs query, one of the unstick queries, for key and logs the
// sessions it ended.
func (r *Runner) endIdle(ctx context.Context, name, query, key string) {
	rows, err := r.pool.Query(ctx, query, key, BatchIdle.Milliseconds())
	if err != nil {
		r.cfg.Logger.Warn("ending a stuck batch of another process", "projection", name, "err", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		var ended bool
		if err := rows.Scan(&pid, &ended); err != nil {
			break
		}
		r.cfg.Logger.Warn("ended the session of a batch left idle in its transaction (its process frozen?)", "projection", name, "backend", pid, "ended", ended)
	}
	if err := rows.Err(); err != nil {
		r.cfg.Logger.Warn("ending a stuck batch of another process", "projection", name, "err", err)
	}
}
