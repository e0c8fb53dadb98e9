package projections

import (
	"context"
	"time"
)

// unsticking is a follower's record of a checkpoint it finds held.
type unsticking struct {
	since time.Time // first found held (zero: not held)
	tried time.Time // last unstick query
}

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
// its batches take no batch lock, a rebuild's swap of it does). It costs
// nothing while checkpoints are free.
func (r *Runner) unstick(ctx context.Context, p *compiled, u *unsticking) {
	name := p.Name
	now := time.Now()
	if u.since.IsZero() {
		u.since = now
	}
	if now.Sub(u.since) < BatchIdle+LeaseCheck || now.Sub(u.tried) < LeaseCheck || !r.holdsLease(name) {
		return
	}
	u.tried = now
	qctx, cancel := context.WithTimeout(ctx, leaseQuery)
	defer cancel()
	r.endIdle(qctx, name, unstickSQL, name)
	if p.SessionRole != "" {
		r.endIdle(qctx, name, unstickRoleSQL, p.SessionRole)
	}
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
