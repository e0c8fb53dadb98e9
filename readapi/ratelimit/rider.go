package ratelimit

import (
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/projections/identity"
)

// Counting a gateway request in its key's look-up. With the PostgreSQL
// limiter (Config.Postgres), PrepareGateway runs before the key middleware
// and gives the look-up a rider (identity.Rider): the statement that
// counts the request against its account's daily window, for a key the
// look-up admits and whose own limits reserve nothing. The key and its
// quota are then decided in one round trip; Gateway uses the count the
// look-up made. A key answered from the key cache, or one whose limits
// reserve (its count goes with the reservation: Deferred), is counted by
// Gateway as before.

// rideSQL counts the request of the key EligibleKeySQL finds ($1-$3) in
// the counter $4 || account_id of window [$5, $6) against its plan's limit
// ($7 plans, $8 their limits). It returns the count (NULL: the window was
// full), the account and the plan (NULL: no eligible key; nothing counted).
const rideSQL = `WITH k AS (` + identity.EligibleKeySQL + `),
l AS (SELECT k.account_id, k.plan, p.lim FROM k JOIN unnest($7::text[], $8::bigint[]) AS p(plan, lim) ON p.plan = k.plan),
t AS (INSERT INTO quota_counters AS q (bucket, window_start, window_end, count)
	SELECT $4 || l.account_id::text, $5, $6, 1 FROM l WHERE l.lim >= 1
	ON CONFLICT (bucket, window_start) DO UPDATE SET count = q.count + 1 WHERE q.count < (SELECT lim FROM l)
	RETURNING q.count)
SELECT (SELECT count FROM t), (SELECT account_id FROM l), (SELECT plan FROM l)`

// planRider is one request's rider. Safe for concurrent use.
type planRider struct {
	window Window
	plans  []string
	limits []int64

	mu      sync.Mutex
	counted bool
	bucket  string
	res     Result
}

// Ride implements identity.Rider.
func (r *planRider) Ride(b *pgx.Batch, secretHash string, svc account.Service, now time.Time) {
	prefix := AccountBucket(svc, uuid.Nil)
	prefix = prefix[:len(prefix)-len(uuid.Nil.String())]
	b.Queue(rideSQL, secretHash, string(svc), now, prefix, r.window.Start, r.window.End, r.plans, r.limits).QueryRow(func(row pgx.Row) error {
		var n *int64
		var acct *uuid.UUID
		var plan *string
		if err := row.Scan(&n, &acct, &plan); err != nil || acct == nil || plan == nil {
			return err
		}
		limit := account.Plan(*plan).Offer().Limits.GatewayRequestsPerDay
		res := denied(r.window, limit)
		if n != nil {
			res = admitted(r.window, limit, *n)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.counted, r.bucket, r.res = true, AccountBucket(svc, *acct), res
		return nil
	})
}

// result is the count the look-up made for bucket, if it made one.
func (r *planRider) result(bucket string) (Result, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.res, r.counted && r.bucket == bucket
}

const riderCtxKey = "ratelimit.rider"

// PrepareGateway gives the key look-up of a gateway route that Gateway
// counts a rider that counts the request (see above); it must run before
// the key middleware. Without the PostgreSQL limiter it does nothing.
func (q *Quota) PrepareGateway() gin.HandlerFunc {
	if q == nil || q.cfg.Postgres == nil {
		return func(c *gin.Context) { c.Next() }
	}
	plans := account.Plans()
	names := make([]string, len(plans))
	limits := make([]int64, len(plans))
	for i, p := range plans {
		names[i], limits[i] = string(p), p.Offer().Limits.GatewayRequestsPerDay
	}
	return func(c *gin.Context) {
		r := &planRider{window: DayWindow(q.cfg.Now()), plans: names, limits: limits}
		c.Set(riderCtxKey, r)
		c.Request = c.Request.WithContext(identity.WithRider(c.Request.Context(), r))
		c.Next()
	}
}

// ridden is the count the key look-up made for the request in bucket.
func ridden(c *gin.Context, bucket string) (Result, bool) {
	v, ok := c.Get(riderCtxKey)
	if !ok {
		return Result{}, false
	}
	r, ok := v.(*planRider)
	if !ok {
		return Result{}, false
	}
	return r.result(bucket)
}
