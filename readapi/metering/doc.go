// Package metering turns the keyed requests the quotas admitted and the
// handlers served (ratelimit.Served: not the 4xx refusals the quotas give
// back) into usage events (usage.CallsCounted) through the CountCalls
// command, off the request path: a request only bumps an in-memory count,
// once it is answered, and one loop appends what accumulated while the
// previous append ran. At low traffic that is one event per request within
// milliseconds; under load one event per key and day carries many calls, so
// the log grows with keys, not with requests.
//
// A failed append never fails the request that was served: the counts are
// kept with their event ids and retried (the ids make a retry append
// nothing twice), logged at warn on each failure and at error, with the
// account and key ids and the number of calls, when given up. The secret of
// a key is never known here. Counts still in memory when the process is
// killed are lost (SIGTERM flushes them).
//
// A Meter is safe for concurrent use.
package metering
