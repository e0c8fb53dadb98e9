package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/projections/identity"
)

// Deferring a keyed request's count. A gateway key with limits of its own
// (a budget, requests or tokens per minute) costs its request a round trip
// to reserve them (commands/spend) once the request is routed; counting the
// plan's quota in the middleware first would cost another. With a Defer
// hook (Config.Defer) the middleware leaves the count to that reservation,
// which sends it first in its own transaction: the key, its limits and its
// quota are then decided in one round trip. Only the PostgreSQL limiter
// can defer (its counters are in the reservation's database).
//
// What the client sees does not change: the same 429 with the same message
// and headers when the window is full, the same X-RateLimit-* headers
// otherwise, a request given back when its response is not Served. One
// thing does: a request refused before its reservation (a body that does
// not parse, a model its key may not use) is no longer counted and given
// back, it is never counted. A request that reaches no reservation and is
// Served anyway (a 5xx of routing) is counted after its response, so
// nothing the quota counted before goes uncounted.

// DeferFunc decides whether the count of p's request is deferred; if so it
// returns the request's context carrying d for the reservation to count
// (commands/spend.WithPlanQuota).
type DeferFunc func(ctx context.Context, p identity.Principal, d *Deferred) (context.Context, bool)

// Deferred is one request's deferred count. Safe for concurrent use.
type Deferred struct {
	limiter *Postgres
	bucket  string
	window  Window
	limit   int64
	now     time.Time
	refusal func(Result, int64) error

	mu      sync.Mutex
	counted bool
	res     Result
}

// Defer returns the deferred count of one request in bucket's window w
// (at now) against limit; refusal makes the 429 of a full window, as for
// a count the middleware makes itself.
func (p *Postgres) Defer(bucket string, w Window, limit int64, now time.Time, refusal func(Result, int64) error) *Deferred {
	return &Deferred{limiter: p, bucket: bucket, window: w, limit: limit, now: now, refusal: refusal}
}

// takeOrAbortSQL counts the request like takeSQL, and when the window is
// full aborts the transaction it runs in (division by zero, SQLSTATE 22012),
// so that nothing else of that transaction (the key's reservation) stands.
const takeOrAbortSQL = `WITH t AS (` + takeSQL + `)
SELECT (SELECT count FROM t), 1 / (SELECT count(*) FROM t)::int`

// Queue queues the count on b, inside a transaction the caller began on
// the limiter's database: a full window aborts that transaction.
func (d *Deferred) Queue(b *pgx.Batch) {
	b.Queue(takeOrAbortSQL, d.bucket, d.window.Start, d.window.End, d.limit).QueryRow(func(row pgx.Row) error {
		var n int64
		var one int
		if err := row.Scan(&n, &one); err != nil {
			return err
		}
		d.set(admitted(d.window, d.limit, n))
		return nil
	})
}

// Counted reads the outcome of a batch that ran Queue: batchErr is the
// batch's error. It returns the refusal (a 429 domain error) when the
// window was full, nil when the request was counted, and batchErr
// otherwise.
func (d *Deferred) Counted(batchErr error) error {
	var pgErr *pgconn.PgError
	if batchErr != nil && errors.As(batchErr, &pgErr) && pgErr.Code == "22012" {
		return d.refuse()
	}
	return batchErr
}

// Count counts the request in its own round trip (a reservation that
// cannot send it in its own): the refusal when the window is full.
func (d *Deferred) Count(ctx context.Context) error {
	if d.limit < 1 {
		return d.refuse()
	}
	res, err := d.limiter.Take(ctx, d.bucket, d.window, d.limit)
	if err != nil {
		return &counterDown{cause: err}
	}
	if !res.Allowed {
		return d.refuse()
	}
	d.set(res)
	return nil
}

// refuse records a full window and returns its refusal.
func (d *Deferred) refuse() error {
	res := denied(d.window, d.limit)
	d.set(res)
	return &Refusal{err: d.refusal(res, d.window.RetryAfter(d.now))}
}

// Refusal is a deferred count's refusal: the plan's 429, answered by the
// handler rather than the middleware. Its response did no work: the
// handler marks it not served (MarkNotServed), so the meter does not
// count it, as it never sees a request the middleware refuses.
type Refusal struct{ err error }

func (r *Refusal) Error() string { return r.err.Error() }
func (r *Refusal) Unwrap() error { return r.err }

// peek is the window as it stands, for the headers of a response that
// counted nothing; a counter that cannot be read shows the whole limit
// left (the headers are advice, the count is what limits).
func (d *Deferred) peek(ctx context.Context) Result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), giveBackTimeout)
	defer cancel()
	n, err := d.limiter.Count(ctx, d.bucket, d.window)
	if err != nil {
		n = 0
	}
	return admitted(d.window, d.limit, n)
}

func (d *Deferred) set(res Result) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.counted, d.res = true, res
}

func (d *Deferred) result() (Result, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.res, d.counted
}

// deferred runs the rest of the chain with the count of the request left
// to its reservation, then gives it back if it was counted and its response
// is not Served, or counts it if nothing did and it is Served.
func (q *Quota) deferred(c *gin.Context, d *Deferred) {
	w := &deferWriter{ResponseWriter: c.Writer, d: d, ctx: c.Request.Context()}
	c.Writer = w
	defer func() { c.Writer = w.ResponseWriter }()
	c.Next()
	w.fix()
	res, counted := d.result()
	served := ServedRequest(c)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), giveBackTimeout)
	defer cancel()
	switch {
	case counted && res.Allowed && !served:
		if err := q.limiter.Give(ctx, d.bucket, res.Window); err != nil {
			q.cfg.Logger.Warn("giving back a refused request's quota failed", "bucket", d.bucket, "err", err,
				"request_id", c.GetString("request_id"))
		}
	case !counted && served:
		if _, err := q.limiter.Take(ctx, d.bucket, d.window, d.limit); err != nil {
			q.cfg.Logger.Warn("counting a served request after its response failed", "bucket", d.bucket, "err", err,
				"request_id", c.GetString("request_id"))
		}
	}
}

// deferWriter writes the X-RateLimit-* headers (and Retry-After on a
// refusal) of a deferred count when the response's headers go out, as
// the middleware does for a count it made itself; a response that is not
// Served shows the request given back.
type deferWriter struct {
	gin.ResponseWriter
	d    *Deferred
	ctx  context.Context
	done bool
}

func (w *deferWriter) fix() {
	if w.done || w.ResponseWriter.Written() {
		return
	}
	w.done = true
	res, counted := w.d.result()
	if !counted {
		// Refused before its reservation (a body that does not parse, a
		// model its key may not use): nothing was counted, and the
		// headers show the window as it is.
		res = w.d.peek(w.ctx)
	}
	h := w.Header()
	SetHeaders(h, res)
	switch {
	case !counted:
	case !res.Allowed:
		h.Set("Retry-After", strconv.FormatInt(res.Window.RetryAfter(w.d.now), 10))
	case !Served(w.ResponseWriter.Status()):
		h.Set("X-RateLimit-Remaining", strconv.FormatInt(min(res.Remaining+1, res.Limit), 10))
	}
}

// WriteHeaderNow implements gin.ResponseWriter.
func (w *deferWriter) WriteHeaderNow() {
	w.fix()
	w.ResponseWriter.WriteHeaderNow()
}

// Write implements http.ResponseWriter.
func (w *deferWriter) Write(b []byte) (int, error) {
	w.fix()
	return w.ResponseWriter.Write(b)
}

// WriteString implements gin.ResponseWriter.
func (w *deferWriter) WriteString(s string) (int, error) {
	w.fix()
	return w.ResponseWriter.WriteString(s)
}

// Flush implements http.Flusher.
func (w *deferWriter) Flush() {
	w.fix()
	w.ResponseWriter.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *deferWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errNoPostgres is Config.Defer without the PostgreSQL limiter.
var errNoPostgres = fmt.Errorf("ratelimit: Config.Defer needs Config.Postgres (its counts are sent in the reservation's transaction)")
