// Package ratelimit enforces the plans' request quotas and the per-IP limit
// of the records service's public endpoints, with fixed windows counted
// exactly under concurrency.
//
// A Limiter counts: one atomic check-and-increment per request, so with N
// requests left in a window, any number of concurrent requests admits
// exactly N. Postgres (the default) does it with one upsert on the
// quota_counters table (migration 00004); Redis (when REDIS_URL is set)
// with one Lua script. Counters are operational state, not events.
//
// Coalescing wraps either so that concurrent requests of one bucket share a
// round trip: while one is out, arrivals queue, and the next round trip
// admits as many of them as the window has left (TakeN), in arrival order,
// in one atomic step. The count stays exact across processes; the counter
// store sees one round trip per busy bucket at a time instead of one per
// request.
//
// A Quota turns a Limiter into gin middlewares, one per service:
//
//   - gateway: GatewayRequestsPerDay of the plan, per account, per UTC day;
//   - answer: AnswerCallsPerDay of the plan, per key, per UTC day;
//   - records: RecordsRequestsPerHour of the plan, per key, per clock hour;
//   - records' public endpoints: a request with a key counts against the
//     key's hourly quota as on the keyed routes; one without counts
//     Config.PublicPerHour per client IP (IPv6 by /64) per clock hour, in
//     buckets of their own, so keyed and key-less traffic cannot exhaust
//     each other (RecordsPublic);
//   - the gateway's /v1/log routes: Config.PublicPerHour per client IP per
//     clock hour, in the gateway's own buckets (PublicPerIP).
//
// Every counted response carries X-RateLimit-Limit, X-RateLimit-Remaining
// (after this request) and X-RateLimit-Reset (Unix seconds at which the
// window ends); a refused one is a 429 with Retry-After (seconds to the
// window end) and an ErrRateLimited domain error saying which limit, when
// it resets and how to raise it. If the counter store fails, the request is
// refused with 503 rather than served uncounted.
//
// Only served requests count (see Served): the quota is taken before the
// handler, so that the limit holds exactly under concurrency and a 429
// costs no work, and a request the handler refuses with a 4xx other than
// 429 (bad parameters, a plan that does not allow it, an unknown list) is
// given back (Limiter.Give) once it is answered; its X-RateLimit-Remaining
// already counts it as given back. While a refused request runs it holds
// its unit, so a concurrent request may see the window one fuller than it
// ends up; served requests never exceed the limit. The sign-in mail limits
// count every attempt: they bound mail sent on strangers' requests, not a
// plan's usage.
//
// Everything here is safe for concurrent use.
package ratelimit
