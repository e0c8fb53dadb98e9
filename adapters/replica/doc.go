// Package replica sends the read side's queries to a PostgreSQL streaming
// replica (ARR_READ_DATABASE_URL) while it is fresh enough, and to the
// primary otherwise.
//
// A Router has the methods of projections.DB: the read models' queries run
// through it.
// Every Check (1 s) it reads the primary's WAL position and the replica's
// replay position; the replica's lag is how long ago the primary was where
// the replica is now (to within Check). A replica that does not answer,
// that is not in recovery (promoted: it may have forked from the primary),
// or that lags by more than MaxLag is not used: queries go to the primary
// until it is fresh again, so a read is never staler than MaxLag.
//
// Read-your-writes: after a command, the process that made it calls
// AwaitReplay, which waits (bounded by its context) for the replica to
// replay past the primary's WAL position at the call (so past the
// command's commit and the read models' transactions that applied it). If
// the replica does not get there in time, the Router reads from the
// primary until it does. The identity check (keys, sessions) never reads
// the replica: a revoked key fails closed on the primary at once.
//
// A query that cannot get a replica connection is run on the primary, and
// the replica is marked down until the next check finds it again.
package replica
